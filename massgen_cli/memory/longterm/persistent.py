"""PersistentMemory: long-term memory on mem0 over a vector store, shared by every agent of a process.

Records are tagged ``{agent_id, session_id, turn, attempt, role}`` and keyed by content, so the same
content recorded twice is one memory whose sources grow. With a usable memory LLM, mem0 extracts
facts; without one (no key, or the local model) messages are stored verbatim, in chunks.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from massgen_cli.config.memory import LifecycleConfig, PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.embedder import Mem0EmbedderAdapter
from massgen_cli.memory.longterm.index import IndexedMemory, MemoryIndex, Source
from massgen_cli.memory.longterm.keys import memory_key, segment
from massgen_cli.memory.longterm.lifecycle import expired, expires_at
from massgen_cli.memory.longterm.mem0_config import plan_embedder, plan_llm
from massgen_cli.memory.longterm.ranking import reciprocal_rank_fusion
from massgen_cli.memory.longterm.records import (
    MemoryHit,
    RecordContext,
    RecordMessage,
    RecordOutcome,
    chunk_text,
    contextual_text,
)
from massgen_cli.memory.longterm.stores import vector_store_config
from massgen_cli.memory.longterm.values import DEFAULT_VALUE, ValueUpdate, blend, td_update
from massgen_cli.memory.longterm.visibility import Viewer, visible_source

NAMESPACE = "massgen"
CANDIDATES_PER_RESULT = 10
MIN_CANDIDATES = 100


def _scoped_source(memory: IndexedMemory, session_id: str | None, agent_id: str | None) -> Source | None:
    """The first source recorded in ``session_id`` by ``agent_id`` (None matches any), or None."""
    return next(
        (
            source
            for source in memory.sources
            if session_id in (None, source.session_id) and agent_id in (None, source.agent_id)
        ),
        None,
    )


class PersistentMemory:
    """One long-term store (mem0 + vector store + index) for the whole process."""

    def __init__(
        self,
        settings: PersistentMemoryConfig,
        state_dir: Path,
        *,
        domain: str,
        task_type: str,
        lifecycle: LifecycleConfig | None = None,
    ):
        self.settings = settings
        self.lifecycle = lifecycle or LifecycleConfig()
        self.state_dir = state_dir
        self.domain, self.task_type = segment(domain), segment(task_type)
        self.llm_plan = plan_llm(settings.llm)
        self.embedder_plan = plan_embedder(settings.embedding)
        memory_dir = state_dir / "memory"
        self.index = MemoryIndex(memory_dir / "index.db" if settings.on_disk else Path(":memory:"))
        self._check_embedder()
        self._mem0: Any = None
        self._lock = threading.Lock()

    def _check_embedder(self) -> None:
        built_with = self.index.meta("embedder")
        wanted = f"{self.embedder_plan.name}/{self.embedder_plan.dimensions}"
        if built_with is None:
            self.index.set_meta("embedder", wanted)
        elif built_with != wanted:
            raise MemoryStoreError(
                f"this memory store was built with embedder {built_with} but the config asks for {wanted}; "
                "use the same embedding settings, another --state-dir, or `massgen memory clear --all --yes`"
            )

    @property
    def mem0(self) -> Any:
        """mem0's Memory, built on first use (the import is heavy)."""
        with self._lock:
            if self._mem0 is None:
                self._mem0 = self._build()
            return self._mem0

    def _build(self) -> Any:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("MEM0_DIR", str(self.state_dir / "mem0"))
        _quiet_libraries()
        from mem0 import Memory

        config = {
            "vector_store": vector_store_config(self.settings, self.state_dir, self.embedder_plan.dimensions),
            "embedder": self.embedder_plan.mem0_config,
            "llm": self.llm_plan.mem0_config,
            # Several processes share a pgvector store; mem0's own history file would make them wait on
            # each other's SQLite locks, and nothing here reads it.
            "history_db_path": ":memory:"
            if self.settings.vector_store == "pgvector"
            else str(self.state_dir / "memory" / "history.db"),
        }
        try:
            memory = Memory.from_config(config)
        except MemoryStoreError:
            raise
        except Exception as error:
            raise MemoryStoreError(f"could not open the memory store: {error}") from error
        if self.embedder_plan.local:
            memory.embedding_model = Mem0EmbedderAdapter()
        return memory

    def record(self, messages: list[RecordMessage], context: RecordContext) -> RecordOutcome:
        """Store ``messages`` ({role, content}); blocking (run it in a thread)."""
        messages = [m for m in messages if m.get("role") != "system" and str(m.get("content") or "").strip()]
        if not messages:
            return RecordOutcome()
        if self.llm_plan.extracts:
            try:
                return self._record_facts(messages, context)
            except Exception as error:  # extraction failed: keep the words rather than lose them
                outcome = self._record_verbatim(messages, context)
                outcome.note = f"fact extraction failed ({error}); stored verbatim"
                return outcome
        return self._record_verbatim(messages, context)

    def _record_verbatim(self, messages: list[RecordMessage], context: RecordContext) -> RecordOutcome:
        outcome = RecordOutcome(verbatim=True)
        for message in messages:
            extra = dict(message.get("metadata") or {})
            for chunk in chunk_text(str(message["content"])):
                self._store(chunk, str(message["role"]), context, outcome, extra)
        return outcome

    def _record_facts(self, messages: list[RecordMessage], context: RecordContext) -> RecordOutcome:
        outcome = RecordOutcome(verbatim=False)
        result = self.mem0.add(messages, user_id=NAMESPACE, metadata=self._payload(context), infer=True)
        facts = replace(context, level="semantic")
        for item in result.get("results", []):
            if item.get("event", "ADD") != "ADD":
                continue
            outcome.facts += 1
            self._adopt(item["id"], str(item["memory"]), facts, outcome)
        return outcome

    def _store(
        self, text: str, role: str, context: RecordContext, outcome: RecordOutcome, extra: dict[str, Any]
    ) -> None:
        key = memory_key(text, self.domain, self.task_type)
        existing = self.index.id_for_key(key)
        if existing is not None:
            self._add_source(existing, context, outcome)
            return
        payload = {**extra, **self._payload(context), "key": key}
        indexed = contextual_text(text, context)
        result = self.mem0.add(
            [{"role": role, "content": indexed}], user_id=NAMESPACE, metadata=payload, infer=False
        )
        memory_id = result["results"][0]["id"]
        self._index_new(memory_id, key, text, role, context, outcome, extra)

    def _adopt(self, memory_id: str, text: str, context: RecordContext, outcome: RecordOutcome) -> None:
        """Give a fact mem0 just stored its key; a fact already known becomes a new source instead."""
        key = memory_key(text, self.domain, self.task_type)
        existing = self.index.id_for_key(key)
        if existing is not None:
            self.mem0.delete(memory_id)
            self._add_source(existing, context, outcome)
            return
        self._update_payload(memory_id, {"key": key})
        self._index_new(memory_id, key, text, "assistant", context, outcome)

    def _index_new(
        self,
        memory_id: str,
        key: str,
        text: str,
        role: str,
        context: RecordContext,
        outcome: RecordOutcome,
        extra: dict[str, Any] | None = None,
    ) -> None:
        fields = {
            "domain": self.domain,
            "task_type": self.task_type,
            "role": role,
            "extra": extra or {},
            "indexed": contextual_text(text, context),
            "expires_at": expires_at(context.level, self.lifecycle),
        }
        try:
            self.index.add(memory_id, key, text, fields, context.source)
        except sqlite3.IntegrityError:  # another process stored the same content a moment ago
            self.mem0.delete(memory_id)
            existing = self.index.id_for_key(key)
            if existing is not None:
                self._add_source(existing, context, outcome)
            return
        outcome.added.append(memory_id)

    def _add_source(self, memory_id: str, context: RecordContext, outcome: RecordOutcome) -> None:
        self.index.add_source(memory_id, context.source)
        self.index.extend_expiry(memory_id, expires_at(context.level, self.lifecycle))
        outcome.existing.append(memory_id)

    def _update_payload(self, memory_id: str, changes: dict[str, Any]) -> None:
        current = self.mem0.vector_store.get(memory_id)
        payload = {**(current.payload or {}), **changes} if current is not None else changes
        self.mem0.vector_store.update(memory_id, payload=payload)

    def _payload(self, context: RecordContext) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            "agent": context.agent_id,
            "session": context.session_id,
            "turn": context.turn,
            "attempt": context.attempt,
        }

    def search(
        self,
        query: str,
        *,
        limit: int,
        viewer: Viewer | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
        domain: str | None = None,
        task_type: str | None = None,
        method: str = "hybrid",
        value_goal: str | None = None,
        value_weight: float = 0.0,
    ) -> list[MemoryHit]:
        """The memories that best match ``query``: the vector store's similarity fused with BM25 over
        the lexical index (``method`` picks ``dense`` or ``lexical`` alone). With a viewer, only what it
        may see (turn-aware); ``session_id`` / ``agent_id`` keep memories with such a source."""
        if limit <= 0 or self.index.count() == 0:
            return []
        pool = max(MIN_CANDIDATES, limit * CANDIDATES_PER_RESULT)
        domain, task_type = (segment(domain) if domain else None), (segment(task_type) if task_type else None)
        rankings = []
        if method in ("hybrid", "dense"):
            rankings.append(self._dense(query, pool, domain, task_type))
        if method in ("hybrid", "lexical"):
            rankings.append(self.index.lexical(query, pool, domain=domain, task_type=task_type))
        fused = reciprocal_rank_fusion(rankings)
        if value_goal and value_weight > 0:
            fused = self._with_values(fused, segment(value_goal), value_weight)
        indexed = self.index.get(memory_id for memory_id, _ in fused)
        winners = self.index.winners() if viewer else {}
        hits = []
        for memory_id, score in fused:
            memory = indexed.get(memory_id)
            scoped = _scoped_source(memory, session_id, agent_id) if memory is not None else None
            if memory is None or scoped is None or expired(memory.expires_at):
                continue
            source = visible_source(memory, viewer, winners) if viewer else scoped
            if source is not None:
                hits.append(MemoryHit(memory.id, memory.text, score, memory, source))
        return hits[:limit]

    def _with_values(
        self, fused: list[tuple[str, float]], goal: str, weight: float
    ) -> list[tuple[str, float]]:
        """Similarity (normalised by the best score) blended with each memory's learned value."""
        if not fused:
            return fused
        best = fused[0][1]
        values = self.index.values((memory_id for memory_id, _ in fused), goal)
        scored = [(i, blend(score / best, values.get(i, DEFAULT_VALUE), weight)) for i, score in fused]
        return sorted(scored, key=lambda pair: pair[1], reverse=True)

    def apply_value_updates(self, updates: list[ValueUpdate], goal: str, alpha: float) -> dict[str, float]:
        """Move each memory's value for ``goal`` toward its reward; returns the new values."""
        goal = segment(goal)
        current = self.index.values((u.memory_id for u in updates), goal)
        new_values = {}
        for update in updates:
            value = td_update(
                current.get(update.memory_id, DEFAULT_VALUE), update.reward, update.trace, alpha
            )
            self.index.set_value(update.memory_id, goal, value)
            new_values[update.memory_id] = value
        return new_values

    def _dense(self, query: str, pool: int, domain: str | None, task_type: str | None) -> list[str]:
        filters: dict[str, Any] = {"user_id": NAMESPACE}
        filters.update(
            {name: value for name, value in (("domain", domain), ("task_type", task_type)) if value}
        )
        found = self.mem0.search(query, filters=filters, top_k=pool, threshold=0.0).get("results", [])
        return [item["id"] for item in found]

    def prepare_embeddings(self, items: list[tuple[str, RecordContext]]) -> None:
        """Embed what ``record`` will store for these (text, context) pairs, in one batch (imports)."""
        embedder = self.mem0.embedding_model
        if isinstance(embedder, Mem0EmbedderAdapter):
            embedder.prepare(
                [contextual_text(chunk, context) for text, context in items for chunk in chunk_text(text)]
            )

    def record_winner(self, session_id: str, turn: int, agent_id: str) -> None:
        self.index.record_winner(session_id, turn, agent_id)

    def list_memories(
        self, *, session_id: str | None = None, agent_id: str | None = None
    ) -> list[IndexedMemory]:
        return self.index.all(session_id=session_id, agent_id=agent_id)

    def clear(self, *, session_id: str | None = None) -> int:
        """Delete every memory (or those recorded only in ``session_id``); returns how many."""
        doomed = [
            m.id
            for m in self.index.all(session_id=session_id)
            if session_id is None or {s.session_id for s in m.sources} == {session_id}
        ]
        for memory_id in doomed:
            self.mem0.delete(memory_id)
        self.index.delete(doomed)
        return len(doomed)

    def close(self) -> None:
        self.index.close()


def _quiet_libraries() -> None:
    """mem0 and Qdrant log optional-feature notices at WARNING on every start; they are not ours to show."""
    for name in ("mem0", "mem0.memory.main", "mem0.vector_stores.qdrant", "qdrant_client"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="Payload indexes have no effect in the local Qdrant")

"""PersistentMemory: long-term memory on mem0 over a vector store, shared by every agent of a process.

Records are tagged ``{agent_id, session_id, turn, attempt, role}`` and keyed by content, so the same
content recorded twice is one memory whose sources grow. With a usable memory LLM, mem0 extracts
facts; without one (no key, or the local model) messages are stored verbatim, in chunks.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from massgen_cli.config.memory import LifecycleConfig, PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.keys import memory_key, segment
from massgen_cli.memory.longterm.record.lifecycle import expires_at
from massgen_cli.memory.longterm.record.memories import (
    IndexedMemory,
    MemoryHit,
    RecordContext,
    RecordMessage,
    RecordOutcome,
    Source,
    chunk_text,
    contextual_text,
)
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.ranking import DENSE_WEIGHT, convex_fusion
from massgen_cli.memory.longterm.retrieve.values import DEFAULT_VALUE, ValueUpdate, blend, td_update
from massgen_cli.memory.longterm.store.embedder import Mem0EmbedderAdapter, shared_local_embedder
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.mem0_config import plan_embedder, plan_llm, quiet_libraries
from massgen_cli.memory.longterm.store.vector_stores import vector_store_config

NAMESPACE = "massgen"
WRITE_TOKEN = "massgen_write"
CANDIDATES_PER_RESULT = 10
MIN_CANDIDATES = 100
DENSE_WEIGHTS = {"hybrid": DENSE_WEIGHT, "dense": 1.0, "lexical": 0.0}
BACKFILL_BATCH = 256


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
        self.extraction_failure: str | None = None
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
        quiet_libraries()
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
            # mem0 2.2.1 builds embedders only from its provider names (an in-process one needs
            # langchain); the offline embedder takes the place of the placeholder it built.
            memory.embedding_model = Mem0EmbedderAdapter()
        self._reconcile(memory)
        return memory

    def record(
        self, messages: list[RecordMessage], context: RecordContext, *, verbatim: bool = False
    ) -> RecordOutcome:
        """Store ``messages`` ({role, content}), ``verbatim`` without fact extraction; run it in a thread."""
        messages = [m for m in messages if m.get("role") != "system" and str(m.get("content") or "").strip()]
        if not messages:
            return RecordOutcome()
        if self.llm_plan.extracts and self.extraction_failure is None and not verbatim:
            try:
                return self._record_facts(messages, context)
            except Exception as error:  # keep the words rather than lose them, and stop asking a model
                self.extraction_failure = str(error)  # that fails: each try waits for its retries
                outcome = self._record_verbatim(messages, context)
                outcome.note = (
                    f"the memory LLM failed ({error}): memories are stored verbatim, without fact "
                    "extraction, for the rest of this run"
                )
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
        token = self._begin_write()
        payload = {**self._payload(context), WRITE_TOKEN: token}
        try:
            result = self.mem0.add(messages, user_id=NAMESPACE, metadata=payload, infer=True)
            facts = replace(context, level="semantic")
            for item in result.get("results", []):
                if item.get("event", "ADD") != "ADD":
                    continue
                outcome.facts += 1
                self._adopt(item["id"], str(item["memory"]), facts, outcome)
        finally:
            self.index.finish(token)
        return outcome

    def _store(
        self, text: str, role: str, context: RecordContext, outcome: RecordOutcome, extra: dict[str, Any]
    ) -> None:
        indexed = contextual_text(text, role, context, extra)
        key = memory_key(indexed, self.domain, self.task_type)
        source = context.source(extra)
        existing = self.index.id_for_key(key)
        if existing is not None:
            self._add_source(existing, source, context, outcome)
            return
        vector = self._vector(text)
        token = self._begin_write()
        payload = {**extra, **self._payload(context), "key": key, WRITE_TOKEN: token}
        try:
            result = self.mem0.add(
                [{"role": role, "content": text}], user_id=NAMESPACE, metadata=payload, infer=False
            )
            memory_id = result["results"][0]["id"]
            self._index_new(memory_id, key, text, role, source, context, outcome, extra, indexed, vector)
        finally:
            self.index.finish(token)

    def _adopt(self, memory_id: str, text: str, context: RecordContext, outcome: RecordOutcome) -> None:
        """Index a fact mem0 just stored under its key; a fact already known becomes a new source instead."""
        indexed = contextual_text(text, "assistant", context)
        key = memory_key(indexed, self.domain, self.task_type)
        source = context.source()
        existing = self.index.id_for_key(key)
        if existing is not None:
            self.mem0.delete(memory_id)
            self._add_source(existing, source, context, outcome)
            return
        self._index_new(
            memory_id, key, text, "assistant", source, context, outcome, None, indexed, self._vector(text)
        )

    def _index_new(
        self,
        memory_id: str,
        key: str,
        text: str,
        role: str,
        source: Source,
        context: RecordContext,
        outcome: RecordOutcome,
        extra: dict[str, Any] | None,
        indexed: str,
        vector: list[float],
    ) -> None:
        fields = {
            "domain": self.domain,
            "task_type": self.task_type,
            "role": role,
            "extra": extra or {},
            "indexed": indexed,
            "expires_at": expires_at(context.level, self.lifecycle),
        }
        try:
            self.index.add(memory_id, key, text, fields, source, vector)
        except sqlite3.IntegrityError:  # another process stored the same content a moment ago
            self.mem0.delete(memory_id)
            existing = self.index.id_for_key(key)
            if existing is not None:
                self._add_source(existing, source, context, outcome)
            return
        outcome.added.append(memory_id)

    def _add_source(
        self, memory_id: str, source: Source, context: RecordContext, outcome: RecordOutcome
    ) -> None:
        self.index.add_source(memory_id, source)
        self.index.extend_expiry(memory_id, expires_at(context.level, self.lifecycle))
        outcome.existing.append(memory_id)

    def _begin_write(self) -> str:
        """Journal a write to the vector store; its points carry the token, so ``_reconcile`` can find
        them if the process dies before the index has them."""
        token = uuid.uuid4().hex
        self.index.begin(token)
        return token

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts`` from the configured embedder."""
        if self.embedder_plan.local:
            return shared_local_embedder().embed_many(texts)
        return [self.mem0.embedding_model.embed(text, "add") for text in texts]

    def _vector(self, text: str) -> list[float]:
        """The vector of what is stored; the offline embedder keeps it for mem0's own ``embed``, any
        other embedder is asked twice (mem0 2.2.1's ``add`` takes no vector)."""
        embedder = self.mem0.embedding_model
        if isinstance(embedder, Mem0EmbedderAdapter):
            return embedder.vector(text)
        return self._vectors([text])[0]

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
        scope: SearchFilter | None = None,
        method: str = "hybrid",
        value_goal: str | None = None,
        value_weight: float = 0.0,
    ) -> list[MemoryHit]:
        """The memories that best match ``query``: similarity over the stored vectors and BM25, fused by
        a convex combination of their normalised scores (``method`` picks ``dense`` or ``lexical``
        alone). ``scope`` (a session, an agent, a domain, a task type, a turn-aware viewer) acts inside
        each ranking, so what is out of scope never takes a candidate's place."""
        if limit <= 0 or self.index.count() == 0:
            return []
        scope = (scope or SearchFilter()).normalized()
        pool = max(MIN_CANDIDATES, limit * CANDIDATES_PER_RESULT)
        dense, lexical = [], []
        if method in ("hybrid", "dense"):
            self._index_missing_vectors()
            dense = self.index.dense(self._vectors([query])[0], pool, scope)
        if method in ("hybrid", "lexical"):
            lexical = self.index.lexical(query, pool, scope)
        fused = self.index.ties_by_key(convex_fusion(dense, lexical, DENSE_WEIGHTS[method]))
        if value_goal and value_weight > 0:
            fused = self._with_values(fused, segment(value_goal), value_weight)
        chosen = fused[:limit]
        memories = self.index.get(memory_id for memory_id, _ in chosen)
        sources = self.index.attribute(memories, scope)
        return [
            MemoryHit(memory_id, memories[memory_id].text, score, memories[memory_id], sources[memory_id])
            for memory_id, score in chosen
            if memory_id in memories and memory_id in sources
        ]

    def _index_missing_vectors(self) -> None:
        """Stores made before the index kept vectors get them once, from the text they indexed."""
        while batch := self.index.without_vectors(BACKFILL_BATCH):
            vectors = self._vectors([text for _, text in batch])
            self.index.set_vectors(
                {memory_id: vector for (memory_id, _), vector in zip(batch, vectors, strict=True)}
            )

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

    def prepare_embeddings(self, items: list[tuple[RecordMessage, RecordContext]]) -> None:
        """Embed what ``record`` will store for these messages, in one batch (imports)."""
        embedder = self.mem0.embedding_model
        if isinstance(embedder, Mem0EmbedderAdapter):
            embedder.prepare(
                [chunk for message, _ in items for chunk in chunk_text(message["content"])]
            )

    def record_winner(self, session_id: str, turn: int, agent_id: str, attempt: int | None = None) -> None:
        self.index.record_winner(session_id, turn, agent_id, attempt)

    def list_memories(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        return self.index.all(session_id=session_id, agent_id=agent_id, include_stale=include_stale)

    def clear(self, *, session_id: str | None = None, sessions: set[str] | None = None) -> int:
        """Delete every memory (or those recorded only in ``session_id``, or only in the ``sessions``),
        stale ones included, from the index and the vector store; returns how many. A clear cut short is
        finished by the next open."""
        within = sessions if sessions is not None else ({session_id} if session_id else None)
        doomed = [
            m.id
            for m in self.index.all(session_id=session_id, include_stale=True)
            if within is None or {s.session_id for s in m.sources} <= within
        ]
        self.forget(doomed)
        return len(doomed)

    def forget(self, memory_ids: list[str]) -> None:
        """Delete memories from the index (searches stop finding them at once), then their vectors."""
        self.index.delete(memory_ids)
        for memory_id in memory_ids:
            with contextlib.suppress(Exception):  # already gone (a delete that was cut short)
                self.mem0.delete(memory_id)
            self.index.finish(memory_id)

    def _reconcile(self, memory: Any) -> None:
        """Finish what a process that died left half-done: points of a write the index never got are
        removed, and a delete goes through."""
        for token, kind in self.index.pending():
            if kind == "delete":
                with contextlib.suppress(Exception):
                    memory.delete(token)
            else:
                written = memory.get_all(filters={"user_id": NAMESPACE, WRITE_TOKEN: token}, top_k=1000)
                for item in written.get("results", []):
                    if not self.index.has(item["id"]):
                        memory.delete(item["id"])
            self.index.finish(token)

    def close(self) -> None:
        self.index.close()


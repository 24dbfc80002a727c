"""Recording: messages become memories in mem0's vector store and in the index, keyed by content, so the
same content recorded twice is one memory whose sources grow. With a usable memory LLM, mem0 extracts
facts; without one (no key, or the local model) messages are stored verbatim, in chunks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any

from massgen_cli.config.memory import LifecycleConfig
from massgen_cli.memory.longterm.record.keys import memory_key
from massgen_cli.memory.longterm.record.lifecycle import expires_at
from massgen_cli.memory.longterm.record.memories import (
    RecordContext,
    RecordMessage,
    RecordOutcome,
    Source,
    chunk_text,
    contextual_text,
)
from massgen_cli.memory.longterm.store.bulk import VerbatimRecord
from massgen_cli.memory.longterm.store.embedding import StoreEmbedding
from massgen_cli.memory.longterm.store.index.contract import KeyTaken, StoreIndex
from massgen_cli.memory.longterm.store.journal import NAMESPACE, WRITE_TOKEN, journalled_write
from massgen_cli.memory.longterm.store.mem0_store import Mem0Store


@dataclass(frozen=True)
class Draft:
    """A text about to be stored, as one recording sees it: what the index holds of it, its key, and
    the source that records it (with that record's own fields, ``extra``)."""

    text: str
    role: str
    indexed: str
    key: str
    source: Source
    extra: dict[str, Any]


@dataclass(eq=False, repr=False)  # for its constructor: compared and shown by identity
class MemoryWriter:
    """Writes recordings to mem0 and the index; blocking, so callers run it in a thread."""

    index: StoreIndex
    mem0: Mem0Store
    embedding: StoreEmbedding
    _: KW_ONLY
    domain: str
    task_type: str
    lifecycle: LifecycleConfig
    extraction_failure: str | None = field(default=None, init=False)

    @property
    def extracts(self) -> bool:
        """Whether records go through the memory LLM's fact extraction (else they are kept verbatim)."""
        return self.mem0.llm_plan.extracts and self.extraction_failure is None

    def record(
        self, messages: list[RecordMessage], context: RecordContext, *, verbatim: bool = False
    ) -> RecordOutcome:
        """Store ``messages`` ({role, content}), ``verbatim`` without fact extraction."""
        messages = kept(messages)
        if not messages:
            return RecordOutcome()
        if self.extracts and not verbatim:
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
        for draft in self.verbatim_drafts(messages, context):
            self._store(draft, context, outcome)
        return outcome

    def verbatim_drafts(self, messages: list[RecordMessage], context: RecordContext) -> list[Draft]:
        """What recording ``messages`` verbatim stores: one draft per chunk, with its key."""
        return [
            self._draft(chunk, str(message["role"]), context, dict(message.get("metadata") or {}))
            for message in messages
            for chunk in chunk_text(str(message["content"]))
        ]

    def _record_facts(self, messages: list[RecordMessage], context: RecordContext) -> RecordOutcome:
        outcome = RecordOutcome(verbatim=False)
        with journalled_write(self.index, lambda: self.mem0.memory) as token:
            payload = {**self._payload(context), WRITE_TOKEN: token}
            result = self.mem0.memory.add(messages, user_id=NAMESPACE, metadata=payload, infer=True)
            facts = replace(context, level="semantic")
            for item in result.get("results", []):
                if item.get("event", "ADD") != "ADD":
                    continue
                outcome.facts += 1
                self._adopt(item["id"], self._draft(str(item["memory"]), "assistant", facts), facts, outcome)
        return outcome

    def _draft(
        self, text: str, role: str, context: RecordContext, extra: dict[str, Any] | None = None
    ) -> Draft:
        indexed = contextual_text(text, role, context, extra)
        key = memory_key(indexed, self.domain, self.task_type)
        return Draft(text, role, indexed, key, context.source(extra), extra or {})

    def _store(self, draft: Draft, context: RecordContext, outcome: RecordOutcome) -> None:
        existing = self.index.id_for_key(draft.key)
        if existing is not None:
            self.add_source(existing, draft.source, context, outcome)
            return
        [vector] = self.embedding.embed([draft.text])
        with journalled_write(self.index, lambda: self.mem0.memory) as token:
            record = VerbatimRecord(draft.text, draft.role, self.metadata(draft, context, token), vector)
            [memory_id] = self.mem0.add_verbatim([record])  # mem0's verbatim add, without the text
            self.index_new(memory_id, draft, context, outcome, vector)

    def _adopt(self, memory_id: str, draft: Draft, context: RecordContext, outcome: RecordOutcome) -> None:
        """Index a fact mem0 just stored under its key; a fact already known becomes a new source instead."""
        existing = self.index.id_for_key(draft.key)
        if existing is not None:
            self.mem0.memory.delete(memory_id)
            self.add_source(existing, draft.source, context, outcome)
            return
        self.index_new(memory_id, draft, context, outcome, self.embedding.stored_vector(draft.text))

    def index_new(
        self,
        memory_id: str,
        draft: Draft,
        context: RecordContext,
        outcome: RecordOutcome,
        vector: Sequence[float],
    ) -> None:
        fields = {
            "domain": self.domain,
            "task_type": self.task_type,
            "role": draft.role,
            "extra": draft.extra,
            "indexed": draft.indexed,
            "expires_at": expires_at(context.level, self.lifecycle),
        }
        try:
            self.index.add(memory_id, draft.key, draft.text, fields, draft.source, vector)
        except KeyTaken:  # another process stored the same content a moment ago
            self.key_taken(memory_id, draft, context, outcome)
            return
        outcome.added.append(memory_id)

    def key_taken(self, memory_id: str, draft: Draft, context: RecordContext, outcome: RecordOutcome) -> None:
        """The index refused ``memory_id`` (its key was taken by another process a moment before): its
        point goes, and the draft becomes a source of the memory that holds the key."""
        if memory_id in outcome.added:  # an add answered when its batch ended
            outcome.added.remove(memory_id)
        self.mem0.memory.delete(memory_id)
        existing = self.index.id_for_key(draft.key)
        if existing is not None:
            self.add_source(existing, draft.source, context, outcome)

    def add_source(
        self, memory_id: str, source: Source, context: RecordContext, outcome: RecordOutcome
    ) -> None:
        self.index.add_source(memory_id, source)
        self.index.extend_expiry(memory_id, expires_at(context.level, self.lifecycle))
        outcome.existing.append(memory_id)

    def metadata(self, draft: Draft, context: RecordContext, token: str) -> dict[str, Any]:
        """What a verbatim record's point carries: the record's own fields, who recorded it and where,
        its key and the journal entry of its write."""
        return {**draft.extra, **self._payload(context), "key": draft.key, WRITE_TOKEN: token}

    def _payload(self, context: RecordContext) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            "agent": context.agent_id,
            "session": context.session_id,
            "turn": context.turn,
            "attempt": context.attempt,
        }


def kept(messages: list[RecordMessage]) -> list[RecordMessage]:
    """What is recorded of ``messages``: not system messages, nor empty ones."""
    return [m for m in messages if m.get("role") != "system" and str(m.get("content") or "").strip()]

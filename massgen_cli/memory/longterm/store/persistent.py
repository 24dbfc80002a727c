"""PersistentMemory: long-term memory on mem0 over a vector store, shared by every agent of a process.

Records are tagged ``{agent_id, session_id, turn, attempt, role}`` and keyed by content, so the same
content recorded twice is one memory whose sources grow. The store is one memory index (SQLite) and
small parts with one job each, over it: ``mem0_store`` (mem0, built on first use, which reconciles the
write ``journal``), ``embedding`` (vectors), ``writing`` (recording), ``searching`` (ranking),
``learning`` (learned values) and ``housekeeping`` (listing, clearing, forgetting). This class builds
them and is what the rest of the program calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Unpack, cast

from massgen_cli.config.memory import LifecycleConfig, PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.record.memories import (
    IndexedMemory,
    MemoryHit,
    RecordContext,
    RecordMessage,
    RecordOutcome,
)
from massgen_cli.memory.longterm.retrieve.values import ValueUpdate
from massgen_cli.memory.longterm.store.bulk_writing import BulkWriter, Items, Vectors
from massgen_cli.memory.longterm.store.embedding import StoreEmbedding, check_embedder
from massgen_cli.memory.longterm.store.housekeeping import Housekeeping
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index.contract import StoreIndex
from massgen_cli.memory.longterm.store.learning import ValueLearning
from massgen_cli.memory.longterm.store.mem0_config import plan_embedder, plan_llm
from massgen_cli.memory.longterm.store.mem0_store import Mem0Store
from massgen_cli.memory.longterm.store.searching import MemorySearch, SearchOptions
from massgen_cli.memory.longterm.store.writing import MemoryWriter


def open_index(settings: PersistentMemoryConfig, state_dir: Path, dimensions: int) -> StoreIndex:
    """The server's index when a server store is configured (PostgreSQL, or a Qdrant server: the whole
    truth, shared by every process and machine); else the local one in the state folder.
    ``dimensions`` is the embedder's vector size (a Qdrant collection is made for it)."""
    if settings.vector_store == "qdrant" and settings.qdrant.mode == "server":
        from massgen_cli.memory.longterm.store.qdrant.index import QdrantIndex
        from massgen_cli.memory.longterm.store.vector_stores import qdrant_client

        return QdrantIndex(qdrant_client(settings, state_dir), settings.qdrant.collection_name, dimensions)
    if settings.vector_store == "pgvector":
        from massgen_cli.memory.longterm.store.server.index import ServerIndex

        if not settings.pgvector.connection_string:
            raise MemoryStoreError(
                "vector_store 'pgvector' needs persistent_memory.pgvector.connection_string, "
                "e.g. postgresql://user:password@localhost:5432/massgen"
            )
        return ServerIndex(settings.pgvector.connection_string, settings.pgvector.collection_name)
    return MemoryIndex(state_dir / "memory" / "index.db" if settings.on_disk else Path(":memory:"))


def upload_local_index(settings: PersistentMemoryConfig, index: StoreIndex, state_dir: Path) -> Any:
    """A server index (PostgreSQL, or a Qdrant server) takes over what the state folder's local index
    holds, once (a ``Migration``, or None when nothing was moved)."""
    if not settings.keeps_truth_on_server:
        return None
    from massgen_cli.memory.longterm.store.migration import UploadTarget, migrate

    return migrate(state_dir, cast(UploadTarget, index))


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
        self.index = open_index(settings, state_dir, self.embedder_plan.dimensions)
        self.migration = upload_local_index(settings, self.index, state_dir)
        check_embedder(self.index, self.embedder_plan)
        self.mem0_store = Mem0Store(settings, state_dir, self.llm_plan, self.embedder_plan, self.index)
        self.embedding = StoreEmbedding(self.embedder_plan, self.mem0_store)
        self.values = ValueLearning(self.index)
        self.writer = MemoryWriter(
            self.index,
            self.mem0_store,
            self.embedding,
            domain=self.domain,
            task_type=self.task_type,
            lifecycle=self.lifecycle,
        )
        self.bulk = BulkWriter(self.writer)
        self.searcher = MemorySearch(self.index, self.embedding, self.values)
        self.housekeeping = Housekeeping(self.index, self.mem0_store)

    @property
    def mem0(self) -> Any:
        """mem0's Memory, built on first use (the import is heavy)."""
        return self.mem0_store.memory

    def record(
        self, messages: list[RecordMessage], context: RecordContext, *, verbatim: bool = False
    ) -> RecordOutcome:
        """Store ``messages`` ({role, content}), ``verbatim`` without fact extraction; run it in a thread."""
        return self.writer.record(messages, context, verbatim=verbatim)

    def search(self, query: str, *, limit: int, **options: Unpack[SearchOptions]) -> list[MemoryHit]:
        """The memories that best match ``query`` within ``scope``, each with up to ``context`` memories
        recorded around it (see ``MemorySearch.search``)."""
        return self.searcher.search(query, limit=limit, **options)

    def apply_value_updates(self, updates: list[ValueUpdate], goal: str, alpha: float) -> dict[str, float]:
        """Move each memory's value for ``goal`` toward its reward; returns the new values."""
        return self.values.update(updates, goal, alpha)

    def record_many(self, items: Items, ready: Vectors | None = None) -> list[RecordOutcome]:
        """What ``record`` stores for each ``(message, context)`` in turn, written in bulk, with the
        vectors ``ready`` holds made ahead (imports; see ``BulkWriter.record_many``)."""
        return self.bulk.record_many(items, ready)

    def record_winner(self, session_id: str, turn: int, agent_id: str, attempt: int | None = None) -> None:
        self.index.record_winner(session_id, turn, agent_id, attempt)

    def list_memories(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        return self.housekeeping.memories(
            session_id=session_id, agent_id=agent_id, include_stale=include_stale
        )

    def clear(self, *, session_id: str | None = None, sessions: set[str] | None = None) -> int:
        """Delete every memory, or those recorded only in ``session_id`` or only in the ``sessions``;
        returns how many (see ``Housekeeping.clear``)."""
        return self.housekeeping.clear(session_id=session_id, sessions=sessions)

    def forget(self, memory_ids: list[str]) -> None:
        """Delete memories from the index, then their vectors."""
        self.housekeeping.forget(memory_ids)

    def close(self) -> None:
        self.index.close()

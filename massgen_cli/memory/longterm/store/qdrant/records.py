"""The Qdrant index's memories and their sources: a memory is one point whose id comes from its key,
written ``insert_only``, so the same content written at once by two processes is one memory (the
second reads back the first's id: ``KeyTaken``, and becomes a source of it). The write journal's
entries carry the time they began: one still there after ``PENDING_GRACE_S`` belongs to a process
that died (Qdrant knows no connections to ask), and whoever opens the store next finishes it."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.memories import IndexedMemory, Source
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.qdrant.filters import equals, one_of, records_of
from massgen_cli.memory.longterm.store.qdrant.points import (
    DENSE,
    TERMS,
    day_number,
    document_terms,
    memory_of,
    names_payload,
    point_id,
    source_of,
)
from massgen_cli.memory.longterm.store.qdrant.sources import QdrantSources, copied

VECTORS_MISSING = "vectors_missing"
PENDING_GRACE_S = 600.0
"""How old an unfinished journal entry must be before another process finishes it: a live process
finishes its own writes within seconds."""
_MEMORY_FIELDS = [
    "memory_id",
    "key",
    "text",
    "domain",
    "task_type",
    "role",
    "created_at",
    "expires_at",
    "extra",
]


class QdrantRecords(QdrantSources):
    """Memories, their sources and the write journal, on the server."""

    def id_for_key(self, key: str) -> str | None:
        found = self.client.retrieve(self.memories, [point_id("memory", key)], with_payload=["memory_id"])
        return str(found[0].payload["memory_id"]) if found else None

    def ids_for_keys(self, keys: Iterable[str]) -> dict[str, str]:
        points = [point_id("memory", key) for key in dict.fromkeys(keys)]
        if not points:
            return {}
        found = self.client.retrieve(self.memories, points, with_payload=["memory_id", "key"])
        return {str(point.payload["key"]): str(point.payload["memory_id"]) for point in found}

    @contextlib.contextmanager
    def batch(self) -> Iterator[list[tuple[str, str]]]:
        """Qdrant has no transactions: each write inside lands as it is made (and ``add`` answers at
        once)."""
        yield []

    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None:
        """A new memory with its first source, vector and terms; ``KeyTaken`` when a memory with ``key``
        exists (the point written first stays: ``insert_only``, then read back). Five requests: the
        turn's winner, the source, the memory with its copy of its sources, the memory read back, the
        winner read again."""
        from qdrant_client import models

        indexed = fields.get("indexed") or text
        lexical = memory_terms(indexed, text)
        created_at = now_iso()
        payload = {
            "memory_id": memory_id,
            "key": key,
            "text": text,
            "domain": fields["domain"],
            "task_type": fields["task_type"],
            "role": fields["role"],
            "created_at": created_at,
            "expires_at": fields.get("expires_at"),
            "extra": json.dumps(fields.get("extra", {})),
            "indexed": indexed,
            "length": len(lexical),
            "day": day_number(memory_day(indexed, text, created_at)),
            **names_payload(memory_names(indexed, text)),
            "stale": False,
            "sources": [],
        }
        vectors: dict[str, Any] = {TERMS: document_terms(lexical)} if lexical else {}
        if vector is not None:
            vectors[DENSE] = [float(value) for value in vector]
        turn = [(source.session_id, source.turn)]
        winners = self.winners(turn)
        # The source first, so whoever finds the memory (and adds a source to it) finds this one too;
        # the memory then carries its copy of its sources from the start.
        source_point, written = self.put_source(memory_id, source)
        payload["sources"] = [copied(written, winners)]
        point = models.PointStruct(id=point_id("memory", key), vector=vectors, payload=payload)
        self.client.upsert(self.memories, [point], wait=True, update_mode=models.UpdateMode.INSERT_ONLY)
        if self.id_for_key(key) != memory_id:
            self.client.delete(self.records, [source_point], wait=True)  # a source of no memory
            raise KeyTaken(key)
        if vector is None:
            self.set_meta(VECTORS_MISSING, "1")
        if self.winners(turn) != winners:  # a winner of the turn came meanwhile: its rebuild missed this
            self.rebuild([memory_id])

    def extend_expiry(self, memory_id: str, deadline: float | None) -> None:
        """Keep the memory at least until ``deadline`` (None: forever)."""
        found = self.memory_points([memory_id], ["expires_at"])
        if not found:
            return
        current = found[0].get("expires_at")
        kept = None if current is None or deadline is None else max(float(current), deadline)
        if kept != current:
            self.client.set_payload(
                self.memories, {"expires_at": kept}, points=_where_memory([memory_id]), wait=True
            )

    def add_source(self, memory_id: str, source: Source) -> bool:
        """Another recording of the same content; False if this exact source was known."""
        _, offered = self.put_source(memory_id, source)
        sources = self.source_points([memory_id])
        added = any(p.get("writer") == offered["writer"] for p in sources.get(memory_id, []))
        if added:
            self.rebuild([memory_id], sources)
        return added

    def memory_points(self, ids: Iterable[str], fields: Any = True) -> list[dict[str, Any]]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        return [point.payload for point in self.every(self.memories, _where_memory(wanted), fields)]

    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]:
        found = self.memory_points(ids, _MEMORY_FIELDS)
        sources = self.source_points(payload["memory_id"] for payload in found)
        return {
            payload["memory_id"]: memory_of(
                payload, [source_of(s) for s in sources.get(payload["memory_id"], [])]
            )
            for payload in found
        }

    def all(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        """Every memory (optionally one session's or one agent's), oldest first; those marked stale only
        with ``include_stale``."""
        conditions = [equals(f, v) for f, v in (("session_id", session_id), ("agent_id", agent_id)) if v]
        recorded = self.every(self.records, records_of("source", *conditions), ["memory_id"])
        ids = list(dict.fromkeys(point.payload["memory_id"] for point in recorded))
        found = self.get(ids)
        if not include_stale:
            stale = {
                p["memory_id"] for p in self.memory_points(ids, ["memory_id", "stale"]) if p.get("stale")
            }
            found = {memory_id: memory for memory_id, memory in found.items() if memory_id not in stale}
        return sorted(found.values(), key=lambda memory: memory.created_at)

    def has(self, memory_id: str) -> bool:
        return bool(self.client.count(self.memories, count_filter=_where_memory([memory_id])).count)

    def delete(self, ids: Iterable[str]) -> None:
        """Forget memories (their sources, values and marks go with them); each id stays journalled until
        its vector is gone from mem0's collection too (``finish``)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        for memory_id in wanted:
            self.begin(memory_id, "delete")
        self.client.delete(self.memories, _where_memory(wanted), wait=True)
        self.client.delete(self.records, _where_memory(wanted), wait=True)

    def begin(self, token: str, kind: str = "write") -> None:
        """Journal a write to mem0's collection before it starts."""
        payload = {
            "kind": "pending",
            "token": token,
            "job": kind,
            "started_at": now_iso(),
            "began": time.time(),
        }
        self.put(self.records, point_id("pending", token), payload)

    def finish(self, token: str) -> None:
        self.client.delete(self.records, [point_id("pending", token)], wait=True)

    def pending(self) -> list[tuple[str, str]]:
        """``(token, kind)`` of writes and deletes begun more than ``PENDING_GRACE_S`` ago and never
        finished (by a process that died, on any machine)."""
        from qdrant_client import models

        old = models.FieldCondition(key="began", range=models.Range(lt=time.time() - PENDING_GRACE_S))
        found = sorted(
            (p.payload for p in self.every(self.records, records_of("pending", old))),
            key=lambda payload: payload["began"],
        )
        return [(payload["token"], payload["job"]) for payload in found]


def _where_memory(ids: list[str]) -> Any:
    from qdrant_client import models

    return models.Filter(must=[one_of("memory_id", ids)])

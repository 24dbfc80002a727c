"""Sources as points of their own (the truth: written once each, ``insert_only``, so concurrent writers
never lose one another's), the winners of turns, and the copy of a memory's sources that searches
filter on, rebuilt from those points.

The copy is rebuilt after every change to a memory's sources or to the winner of one of their turns,
and read again after it is written: a writer whose copy is already out of date when it lands sees the
difference and writes again. The last copy written is thus made from every source and winner written
before it, and a change after it is followed by its own rebuild."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.qdrant.base import QdrantBase
from massgen_cli.memory.longterm.store.qdrant.filters import equals, one_of, records_of
from massgen_cli.memory.longterm.store.qdrant.points import point_id, source_order, source_payload

REBUILD_ROUNDS = 8
Winners = dict[tuple[str, int], tuple[str, int | None]]


def won(entry: dict[str, Any], winners: Winners) -> bool:
    """Whether a source is its turn's winner's, in the attempt that won (any, for a winner recorded
    without one)."""
    winner = winners.get((entry["session_id"], int(entry["turn"])))
    return bool(winner and winner[0] == entry["agent_id"] and winner[1] in (None, int(entry["attempt"])))


def copied(entry: dict[str, Any], winners: Winners) -> dict[str, Any]:
    """A source as a memory's copy of its sources holds it (with ``won``)."""
    fields = ("agent_id", "session_id", "turn", "attempt", "recorded_at", "extra")
    return {**{field: entry[field] for field in fields}, "won": won(entry, winners)}


class QdrantSources(QdrantBase):
    """Sources, winners, and each memory's copy of its sources."""

    def put_source(self, memory_id: str, source: Source) -> tuple[str, dict[str, Any]]:
        """Write the source's point unless it exists (``insert_only``); its id and the payload offered."""
        from qdrant_client import models

        identity = point_id(
            "source", memory_id, source.agent_id, source.session_id, source.turn, source.attempt
        )
        payload = source_payload(memory_id, source, now_iso(), uuid.uuid4().hex)
        self.put(self.records, identity, payload, update_mode=models.UpdateMode.INSERT_ONLY)
        return identity, payload

    def source_points(self, memory_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The payloads of each memory's sources, in the order they were recorded."""
        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return {}
        return _by_memory(self.every(self.records, records_of("source", one_of("memory_id", wanted))))

    def winners(self, turns: Iterable[tuple[str, int]]) -> Winners:
        """The winner (agent, attempt) of each of ``turns`` that has one."""
        identities = [point_id("winner", session_id, turn) for session_id, turn in set(turns)]
        if not identities:
            return {}
        found = self.client.retrieve(self.records, identities, with_payload=True)
        return {
            (p.payload["session_id"], int(p.payload["turn"])): (p.payload["agent_id"], p.payload["attempt"])
            for p in found
        }

    def copies(self, memory_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """What each memory's copy of its sources should be now: its sources, each with ``won``."""
        by_memory = self.source_points(memory_ids)
        turns = [(p["session_id"], int(p["turn"])) for found in by_memory.values() for p in found]
        winners = self.winners(turns)
        return {memory_id: [copied(p, winners) for p in found] for memory_id, found in by_memory.items()}

    def rebuild(
        self, memory_ids: Iterable[str], sources: dict[str, list[dict[str, Any]]] | None = None
    ) -> None:
        """Write each memory's copy of its sources, until a reading after the write agrees with it
        (``sources``: their source points, when the caller has just read them). The reading after is
        one request: the sources and the winners of their turns."""
        pending = list(dict.fromkeys(memory_ids))
        by_memory = self.source_points(pending) if sources is None else sources
        winners, asked = self.winners(_turns(by_memory)), _turns(by_memory)
        for _ in range(REBUILD_ROUNDS):
            if not pending:
                return
            if unknown := _turns(by_memory) - asked:  # a source of another turn came since
                winners, asked = {**winners, **self.winners(unknown)}, asked | unknown
            written = {m: [copied(p, winners) for p in by_memory.get(m, [])] for m in pending}
            for memory_id in pending:
                self.client.set_payload(
                    self.memories, {"sources": written[memory_id]}, points=_memory(memory_id), wait=True
                )
            by_memory, winners = self._sources_and_winners(pending, asked)
            now = {m: [copied(p, winners) for p in by_memory.get(m, [])] for m in pending}
            pending = [memory_id for memory_id in pending if now[memory_id] != written[memory_id]]

    def _sources_and_winners(
        self, memory_ids: list[str], turns: set[tuple[str, int]]
    ) -> tuple[dict[str, list[dict[str, Any]]], Winners]:
        """The source points of ``memory_ids`` and the winners of ``turns``, in one request."""
        from qdrant_client import models

        wanted = [records_of("source", one_of("memory_id", memory_ids))]
        wanted += [records_of("winner", equals("session_id", s), equals("turn", t)) for s, t in turns]
        found = self.every(self.records, models.Filter(should=wanted))
        winners = [point.payload for point in found if point.payload["kind"] == "winner"]
        return _by_memory(p for p in found if p.payload["kind"] == "source"), {
            (p["session_id"], int(p["turn"])): (p["agent_id"], p["attempt"]) for p in winners
        }

    def memories_of_turn(self, session_id: str, turn: int) -> list[str]:
        """The memories with a source in ``turn`` of ``session_id``."""
        where = records_of("source", equals("session_id", session_id), equals("turn", turn))
        return list(
            dict.fromkeys(p.payload["memory_id"] for p in self.every(self.records, where, ["memory_id"]))
        )


def _memory(memory_id: str) -> Any:
    from qdrant_client import models

    return models.Filter(must=[equals("memory_id", memory_id)])


def _by_memory(points: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Source points' payloads by memory, in the order they were recorded."""
    by_memory: dict[str, list[dict[str, Any]]] = {}
    for payload in sorted((point.payload for point in points), key=source_order):
        by_memory.setdefault(payload["memory_id"], []).append(payload)
    return by_memory


def _turns(by_memory: dict[str, list[dict[str, Any]]]) -> set[tuple[str, int]]:
    return {(p["session_id"], int(p["turn"])) for found in by_memory.values() for p in found}

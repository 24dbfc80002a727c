"""What the Qdrant index learns and marks: learned values per goal, the winners of turns (which set the
``won`` flag on the copies of their turn's sources) and stale marks (the first one written stays:
``insert_only``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import asdict, fields
from typing import Any

from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.qdrant.filters import equals, one_of, records_of
from massgen_cli.memory.longterm.store.qdrant.points import point_id
from massgen_cli.memory.longterm.store.qdrant.records import QdrantRecords


class QdrantLearned(QdrantRecords):
    """Values, winners and stale marks on the server."""

    def values(self, ids: Iterable[str], goal: str) -> dict[str, float]:
        """Learned values of ``ids`` for ``goal`` (memories that never learned are left out)."""
        identities = [point_id("value", memory_id, goal) for memory_id in dict.fromkeys(ids)]
        if not identities:
            return {}
        found = self.client.retrieve(self.records, identities, with_payload=True)
        return {point.payload["memory_id"]: float(point.payload["value"]) for point in found}

    def set_value(self, memory_id: str, goal: str, value: float) -> None:
        identity = point_id("value", memory_id, goal)
        found = self.client.retrieve(self.records, [identity], with_payload=["updates"])
        updates = int(found[0].payload["updates"]) + 1 if found else 1
        payload = {
            "kind": "value",
            "memory_id": memory_id,
            "goal": goal,
            "value": value,
            "updates": updates,
            "updated_at": now_iso(),
        }
        self.put(self.records, identity, payload)

    def ranked_values(self, goal: str, limit: int) -> list[tuple[str, float, int]]:
        """``(memory_id, value, updates)`` for ``goal``, highest value first."""
        found = [p.payload for p in self.every(self.records, records_of("value", equals("goal", goal)))]
        found.sort(key=lambda payload: (-float(payload["value"]), payload["memory_id"]))
        return [(p["memory_id"], float(p["value"]), int(p["updates"])) for p in found[:limit]]

    def record_winner(self, session_id: str, turn: int, agent_id: str, attempt: int | None = None) -> None:
        """``agent_id`` won ``turn`` in ``attempt`` (None: whichever attempt it recorded in); the copies of
        that turn's sources are rebuilt after the winner is written."""
        payload = {
            "kind": "winner",
            "session_id": session_id,
            "turn": turn,
            "agent_id": agent_id,
            "attempt": attempt,
        }
        self.put(self.records, point_id("winner", session_id, turn), payload)
        self.rebuild(self.memories_of_turn(session_id, turn))

    def mark_stale(self, mark: StaleMark) -> bool:
        """Mark ``mark.memory_id`` stale; False when it already was (its first mark stays)."""
        from qdrant_client import models

        writer = uuid.uuid4().hex
        identity = point_id("stale", mark.memory_id)
        payload = _stale_payload(mark, writer)
        self.put(self.records, identity, payload, update_mode=models.UpdateMode.INSERT_ONLY)
        self.client.set_payload(
            self.memories,
            {"stale": True},
            points=models.Filter(must=[equals("memory_id", mark.memory_id)]),
            wait=True,
        )
        found = self.client.retrieve(self.records, [identity], with_payload=["writer"])
        return bool(found and found[0].payload.get("writer") == writer)

    def stale_marks(self, ids: Iterable[str] | None = None) -> dict[str, StaleMark]:
        """The marks of ``ids`` that are stale (None: every mark), by memory id."""
        conditions = []
        if ids is not None:
            wanted = list(dict.fromkeys(ids))
            if not wanted:
                return {}
            conditions.append(one_of("memory_id", wanted))
        found = self.every(self.records, records_of("stale", *conditions))
        names = [field.name for field in fields(StaleMark)]
        return {p.payload["memory_id"]: StaleMark(**{n: p.payload[n] for n in names}) for p in found}

    def adopt_rows(self, kind: str, rows: list[tuple[object, ...]]) -> int:
        """Rows of another index (``values``, ``winners`` or ``stale``, as its export gives them) that
        the server does not have yet, written ``insert_only`` in one request (a point the server has
        stays); how many were new. A new winner's turn and a newly stale memory are then brought up to
        date as ``record_winner`` and ``mark_stale`` bring them."""
        from qdrant_client import models

        writer = uuid.uuid4().hex
        points = dict(_adopted(kind, row, writer) for row in rows)
        if not points:
            return 0
        structs = [models.PointStruct(id=key, vector={}, payload=payload) for key, payload in points.items()]
        self.client.upsert(self.records, structs, wait=True, update_mode=models.UpdateMode.INSERT_ONLY)
        found = self.client.retrieve(self.records, list(points), with_payload=["writer"])
        new = [points[str(point.id)] for point in found if point.payload.get("writer") == writer]
        if kind == "winners":
            self.rebuild(m for p in new for m in self.memories_of_turn(p["session_id"], p["turn"]))
        elif kind == "stale" and new:
            marked = models.Filter(must=[one_of("memory_id", [p["memory_id"] for p in new])])
            self.client.set_payload(self.memories, {"stale": True}, points=marked, wait=True)
        return len(new)


def _adopted(kind: str, row: tuple[Any, ...], writer: str) -> tuple[str, dict[str, Any]]:
    """The records point (id, payload) of one exported row, marked as ``writer``'s."""
    if kind == "values":
        memory_id, goal, value, updates = row
        return point_id("value", memory_id, goal), {
            "kind": "value", "memory_id": memory_id, "goal": goal, "value": float(value),
            "updates": int(updates), "updated_at": now_iso(), "writer": writer,
        }  # fmt: skip
    if kind == "winners":
        session_id, turn, agent_id, attempt = row
        return point_id("winner", session_id, turn), {
            "kind": "winner", "session_id": session_id, "turn": int(turn), "agent_id": agent_id,
            "attempt": attempt, "writer": writer,
        }  # fmt: skip
    mark = StaleMark(*row)  # an exported mark's row: memory_id, reason, marked_by, session_id, turn
    return point_id("stale", mark.memory_id), _stale_payload(mark, writer)


def _stale_payload(mark: StaleMark, writer: str) -> dict[str, Any]:
    """The records point of a stale mark, marked as ``writer``'s."""
    return {"kind": "stale", **asdict(mark), "writer": writer}

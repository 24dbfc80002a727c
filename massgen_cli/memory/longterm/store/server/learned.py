"""What the server index learns and marks: learned values per goal, the winners of turns (which
turn-aware visibility reads) and stale marks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple

from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.server.base import ServerBase, distinct


class ServerLearned(ServerBase):
    """Values, winners and stale marks on the server."""

    def values(self, ids: Iterable[str], goal: str) -> dict[str, float]:
        """Learned values of ``ids`` for ``goal`` (memories that never learned are left out)."""
        wanted = distinct(ids)
        if not wanted:
            return {}
        rows = self.server.rows(
            f"SELECT memory_id, value FROM {self.tables.values} WHERE goal = %s AND memory_id = ANY(%s)",
            (goal, wanted),
        )
        return {memory_id: float(value) for memory_id, value in rows}

    def set_value(self, memory_id: str, goal: str, value: float) -> None:
        self.server.run(
            f"INSERT INTO {self.tables.values} AS v VALUES (%s, %s, %s, 1, %s) ON CONFLICT (memory_id, goal) "
            "DO UPDATE SET value = excluded.value, updates = v.updates + 1, updated_at = excluded.updated_at",
            (memory_id, goal, value, now_iso()),
        )

    def ranked_values(self, goal: str, limit: int) -> list[tuple[str, float, int]]:
        """``(memory_id, value, updates)`` for ``goal``, highest value first."""
        rows = self.server.rows(
            f"SELECT memory_id, value, updates FROM {self.tables.values} WHERE goal = %s "
            "ORDER BY value DESC, memory_id LIMIT %s",
            (goal, limit),
        )
        return [(memory_id, float(value), int(updates)) for memory_id, value, updates in rows]

    def record_winner(self, session_id: str, turn: int, agent_id: str, attempt: int | None = None) -> None:
        """``agent_id`` won ``turn`` in ``attempt`` (None: whichever attempt it recorded in)."""
        self.server.run(
            f"INSERT INTO {self.tables.winners} VALUES (%s, %s, %s, %s) ON CONFLICT (session_id, turn) "
            "DO UPDATE SET agent_id = excluded.agent_id, attempt = excluded.attempt",
            (session_id, turn, agent_id, attempt),
        )

    def mark_stale(self, mark: StaleMark) -> bool:
        """Mark ``mark.memory_id`` stale; False when it already was (its first mark stays)."""
        return bool(
            self.server.run(
                f"INSERT INTO {self.tables.stale} VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                astuple(mark),
            )
        )

    def stale_marks(self, ids: Iterable[str] | None = None) -> dict[str, StaleMark]:
        """The marks of ``ids`` that are stale (None: every mark), by memory id."""
        query = f"SELECT memory_id, reason, marked_by, session_id, turn, marked_at FROM {self.tables.stale}"
        params: list[object] = []
        if ids is not None:
            wanted = distinct(ids)
            if not wanted:
                return {}
            query, params = query + " WHERE memory_id = ANY(%s)", [wanted]
        return {row[0]: StaleMark(*row) for row in self.server.rows(query, params)}

    def adopt_rows(self, kind: str, rows: list[tuple[object, ...]]) -> int:
        """Rows of another index (``values``, ``winners`` or ``stale``, as its export gives them) that
        the server does not have yet; how many were new."""
        table, columns = {
            "values": (self.tables.values, 5),
            "winners": (self.tables.winners, 4),
            "stale": (self.tables.stale, 6),
        }[kind]
        insert = f"INSERT INTO {table} VALUES ({', '.join(['%s'] * columns)}) ON CONFLICT DO NOTHING"
        stamped = kind in ("values", "stale")
        return sum(self.server.run(insert, (*row, now_iso()) if stamped else row) for row in rows)

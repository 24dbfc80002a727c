"""What the index learns from coordination outcomes: each memory's value per goal, and the winner of
each turn (which turn-aware visibility reads)."""

from __future__ import annotations

from collections.abc import Iterable

from massgen_cli.memory.longterm.store.index.schema import IndexFile, now_iso, placeholders


class IndexValues(IndexFile):
    """Learned values and the winners of turns."""

    def values(self, ids: Iterable[str], goal: str) -> dict[str, float]:
        """Learned values of ``ids`` for ``goal`` (memories that never learned are left out)."""
        wanted, marks = placeholders(ids)
        if not wanted:
            return {}
        with self._lock:
            rows = self._db.execute(
                f"SELECT memory_id, value FROM memory_values WHERE goal = ? AND memory_id IN ({marks})",
                [goal, *wanted],
            ).fetchall()
        return {memory_id: value for memory_id, value in rows}

    def set_value(self, memory_id: str, goal: str, value: float) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO memory_values VALUES (?, ?, ?, 1, ?) ON CONFLICT (memory_id, goal) DO UPDATE "
                "SET value = excluded.value, updates = updates + 1, updated_at = excluded.updated_at",
                (memory_id, goal, value, now_iso()),
            )

    def ranked_values(self, goal: str, limit: int) -> list[tuple[str, float, int]]:
        """``(memory_id, value, updates)`` for ``goal``, highest value first."""
        with self._lock:
            return self._db.execute(
                "SELECT memory_id, value, updates FROM memory_values WHERE goal = ? "
                "ORDER BY value DESC LIMIT ?",
                (goal, limit),
            ).fetchall()

    def record_winner(self, session_id: str, turn: int, agent_id: str, attempt: int | None = None) -> None:
        """``agent_id`` won ``turn`` in ``attempt`` (None: whichever attempt it recorded in)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO winners (session_id, turn, agent_id, attempt) VALUES (?, ?, ?, ?)",
                (session_id, turn, agent_id, attempt),
            )

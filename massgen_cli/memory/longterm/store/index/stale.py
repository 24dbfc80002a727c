"""Stale marks: a memory an agent found wrong or outdated (``memory_forget``) stays in the index, for
audit, but searches and retrieval no longer rank it (``SearchFilter.include_stale`` lifts that). A mark
says why, who made it and when in the session; the first mark of a memory is the one kept."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple, dataclass, field

from massgen_cli.memory.longterm.store.index.schema import IndexFile, now_iso, placeholders


@dataclass(frozen=True)
class StaleMark:
    """Why ``memory_id`` is stale, who marked it, and in which session and turn: what ``mark_stale``
    writes and ``stale_marks`` reads back."""

    memory_id: str
    reason: str
    marked_by: str
    session_id: str | None = None
    turn: int | None = None
    marked_at: str = field(default_factory=now_iso)


class IndexStale(IndexFile):
    """Marking memories stale, and reading the marks back."""

    def mark_stale(self, mark: StaleMark) -> bool:
        """Mark ``mark.memory_id`` stale; False when it already was (its first mark stays)."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO stale VALUES (?, ?, ?, ?, ?, ?)",
                astuple(mark),
            )
        return cursor.rowcount > 0

    def stale_marks(self, ids: Iterable[str] | None = None) -> dict[str, StaleMark]:
        """The marks of ``ids`` that are stale (None: every mark), by memory id."""
        query = "SELECT memory_id, reason, marked_by, session_id, turn, marked_at FROM stale"
        params: list[str] = []
        if ids is not None:
            params, marks = placeholders(ids)
            if not params:
                return {}
            query += f" WHERE memory_id IN ({marks})"
        with self._lock:
            rows = self._db.execute(query, params).fetchall()
        return {row[0]: StaleMark(*row) for row in rows}

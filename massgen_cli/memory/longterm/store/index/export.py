"""Reading the whole local index out, row by row, for an upload to a server store (``memory migrate``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from massgen_cli.memory.longterm.record.memories import IndexedMemory
from massgen_cli.memory.longterm.store.index.records import IndexRecords


@dataclass(frozen=True)
class ExportedMemory:
    """A memory with what only the index holds: its vector, indexed text and expiry."""

    memory: IndexedMemory
    vector: Any
    indexed: str | None


class IndexExport(IndexRecords):
    """Every memory with its sources and vector; values, winners and stale marks as rows."""

    def exported(self, batch: int = 500) -> Iterator[ExportedMemory]:
        import numpy as np

        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT rowid, id, vector, indexed FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
                    (last, batch),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            memories = self.get(row[1] for row in rows)
            for _, memory_id, blob, indexed in rows:
                vector = np.frombuffer(blob, dtype=np.float32).tolist() if blob else None
                yield ExportedMemory(memories[memory_id], vector, indexed)

    def exported_rows(self, table: str) -> list[tuple[Any, ...]]:
        """Every row of ``memory_values``, ``winners`` or ``stale``."""
        columns = {
            "memory_values": "memory_id, goal, value, updates",
            "winners": "session_id, turn, agent_id, attempt",
            "stale": "memory_id, reason, marked_by, session_id, turn",
        }[table]
        with self._lock:
            return self._db.execute(f"SELECT {columns} FROM {table}").fetchall()


def fields_of(exported: ExportedMemory) -> dict[str, Any]:
    memory = exported.memory
    return {
        "domain": memory.domain,
        "task_type": memory.task_type,
        "role": memory.role,
        "extra": memory.extra,
        "indexed": exported.indexed,
        "expires_at": memory.expires_at,
    }

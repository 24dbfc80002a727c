"""The index's memories and their sources: adding a memory (with its first source, vector and lexical
entry) in one transaction, further sources of the same content, reading memories back, and deleting
them. Writes that span the vector store and the index are journalled (``pending``) so a process that
dies half-way is reconciled on the next open."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.memories import IndexedMemory, Source
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.schema import IndexFile, now_iso, placeholders, vector_blob
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.index.upgrade import day_text

_MEMORY_COLUMNS = "id, key, text, domain, task_type, role, created_at, expires_at, extra"
_STORED_COLUMNS = f"{_MEMORY_COLUMNS}, vector, indexed, length, day"
_STORED_MARKS = ", ".join("?" * len(_STORED_COLUMNS.split(",")))
SOURCE_COLUMNS = "memory_id, agent_id, session_id, turn, attempt, extra"
KEYS_PER_READ = 500
"""Keys looked up in one statement (well under SQLite's limit of parameters)."""


class IndexRecords(IndexFile):
    """Memories, their sources and the write journal."""

    def id_for_key(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT id FROM memories WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def ids_for_keys(self, keys: Iterable[str]) -> dict[str, str]:
        wanted, found = list(dict.fromkeys(keys)), dict[str, str]()
        with self._lock:
            for start in range(0, len(wanted), KEYS_PER_READ):
                part, marks = placeholders(wanted[start : start + KEYS_PER_READ])
                found.update(self._db.execute(f"SELECT key, id FROM memories WHERE key IN ({marks})", part))
        return found

    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None:
        """A new memory, its first source, its vector, its lexical entry (the terms of
        ``fields["indexed"]``, else of the text) and its names, in one transaction; ``KeyTaken`` when another
        process stored the same key first (raised by the first statement, before anything is written)."""
        indexed = fields.get("indexed") or text
        lexical = memory_terms(indexed, text)
        created_at = now_iso()
        row = (
            memory_id,
            key,
            text,
            fields["domain"],
            fields["task_type"],
            fields["role"],
            created_at,
            fields.get("expires_at"),
            json.dumps(fields.get("extra", {})),
            vector_blob(vector),
            indexed,
            len(lexical),
            day_text(memory_day(indexed, text, created_at)),
        )
        with self._lock, self._atomic():
            self._insert_memory(key, row)
            self._insert_source(memory_id, source)
            self._db.execute("INSERT INTO memories_fts VALUES (?, ?)", (memory_id, " ".join(lexical)))
            self._db.executemany(
                "INSERT INTO names VALUES (?, ?, ?)",
                [(memory_id, kind, name) for kind, name in memory_names(indexed, text).rows()],
            )

    def _insert_memory(self, key: str, row: tuple[Any, ...]) -> None:
        try:
            self._db.execute(f"INSERT INTO memories ({_STORED_COLUMNS}) VALUES ({_STORED_MARKS})", row)
        except sqlite3.IntegrityError as error:
            raise KeyTaken(key) from error

    def extend_expiry(self, memory_id: str, deadline: float | None) -> None:
        """Keep the memory at least until ``deadline`` (None: forever)."""
        with self._lock:
            self._db.execute(
                "UPDATE memories SET expires_at = CASE WHEN expires_at IS NULL OR ? IS NULL THEN NULL "
                "ELSE MAX(expires_at, ?) END WHERE id = ?",
                (deadline, deadline, memory_id),
            )

    def add_source(self, memory_id: str, source: Source) -> bool:
        """Another recording of the same content; False if this exact source was known."""
        with self._lock:
            return self._insert_source(memory_id, source)

    def _insert_source(self, memory_id: str, source: Source) -> bool:
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO sources (memory_id, agent_id, session_id, turn, attempt, recorded_at, "
            "extra) VALUES (?, ?, ?, ?, ?, ?, ?)",
            source_row(memory_id, source),
        )
        return cursor.rowcount > 0

    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]:
        wanted, marks = placeholders(ids)
        if not wanted:
            return {}
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", wanted
            ).fetchall()
            sources = self._db.execute(
                f"SELECT {SOURCE_COLUMNS} FROM sources WHERE memory_id IN ({marks}) ORDER BY rowid",
                wanted,
            ).fetchall()
        return _assemble(rows, sources)

    def all(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        """Every memory (optionally one session's or one agent's), oldest first; those marked stale only
        with ``include_stale``."""
        query = "SELECT DISTINCT memory_id FROM sources WHERE 1=1"
        if not include_stale:
            query += " AND memory_id NOT IN (SELECT memory_id FROM stale)"
        params: list[Any] = []
        if session_id:
            query, params = query + " AND session_id = ?", [*params, session_id]
        if agent_id:
            query, params = query + " AND agent_id = ?", [*params, agent_id]
        with self._lock:
            ids = [row[0] for row in self._db.execute(query, params)]
        found = self.get(ids)
        return sorted(found.values(), key=lambda memory: memory.created_at)

    def has(self, memory_id: str) -> bool:
        with self._lock:
            return (
                self._db.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None
            )

    def delete(self, ids: Iterable[str]) -> None:
        """Forget memories; each id stays journalled (``pending`` kind ``delete``) until its vector is
        gone from the vector store too (``finish``)."""
        wanted, marks = placeholders(ids)
        if not wanted:
            return
        with self._lock, self._atomic():
            self._db.executemany(
                "INSERT OR IGNORE INTO pending VALUES (?, 'delete', ?)", [(i, now_iso()) for i in wanted]
            )
            self._db.execute(f"DELETE FROM memories WHERE id IN ({marks})", wanted)
            self._db.execute(f"DELETE FROM memories_fts WHERE id IN ({marks})", wanted)
            self._bump_generation()

    def begin(self, token: str, kind: str = "write") -> None:
        """Journal a write to the vector store before it starts."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", (token, kind, now_iso()))

    def finish(self, token: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM pending WHERE token = ?", (token,))

    def pending(self) -> list[tuple[str, str]]:
        """``(token, kind)`` of writes and deletes that a process began and did not finish."""
        with self._lock:
            return self._db.execute("SELECT token, kind FROM pending ORDER BY started_at").fetchall()


def _assemble(rows: list[tuple[Any, ...]], sources: list[tuple[Any, ...]]) -> dict[str, IndexedMemory]:
    by_memory: dict[str, list[Source]] = {}
    for row in sources:
        by_memory.setdefault(row[0], []).append(source_of(row))
    return {
        row[0]: IndexedMemory(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            row[6],
            float(row[7]) if row[7] is not None else None,  # stores made before REAL typing hold text
            json.loads(row[8]),
            tuple(by_memory.get(row[0], ())),
        )
        for row in rows
    }


def source_of(row: tuple[Any, ...]) -> Source:
    """A source from a row of ``SOURCE_COLUMNS``."""
    _, agent_id, session_id, turn, attempt, extra = row
    return Source(agent_id, session_id, turn, attempt, json.loads(extra) if extra else {})


def source_row(memory_id: str, source: Source) -> tuple[Any, ...]:
    """A source as every index stores it: memory id, agent, session, turn, attempt, when it was
    recorded, and its own fields as JSON."""
    return (
        memory_id,
        source.agent_id,
        source.session_id,
        source.turn,
        source.attempt,
        now_iso(),
        json.dumps(source.extra, ensure_ascii=False),
    )

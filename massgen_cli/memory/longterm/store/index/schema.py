"""The memory index's file: the SQLite schema and its migrations, the connection every part of the index
shares (one lock, WAL so several processes may share the file), its metadata, and small SQL helpers."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.index.kept_vectors import kept_path
from massgen_cli.memory.longterm.store.index.upgrade import (
    BUMP_GENERATION,
    INDEX_FORM,
    LEXICAL_TABLE,
    TEXT_FORM,
    upgrade_index,
    upgrade_text_form,
)
from massgen_cli.memory.longterm.store.vectors import VectorMatrix

_SCHEMA = f"""
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    key TEXT UNIQUE NOT NULL,
    text TEXT NOT NULL,
    domain TEXT NOT NULL,
    task_type TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at REAL,
    extra TEXT NOT NULL DEFAULT '{{}}',
    vector BLOB,
    indexed TEXT,
    length INTEGER,
    day TEXT
);
CREATE TABLE IF NOT EXISTS sources (
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '{{}}',
    UNIQUE (memory_id, agent_id, session_id, turn, attempt)
);
CREATE INDEX IF NOT EXISTS sources_by_memory ON sources(memory_id);
CREATE INDEX IF NOT EXISTS sources_by_session ON sources(session_id, agent_id);
CREATE TABLE IF NOT EXISTS memory_values (
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    goal TEXT NOT NULL,
    value REAL NOT NULL,
    updates INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, goal)
);
CREATE VIRTUAL TABLE IF NOT EXISTS {LEXICAL_TABLE};
CREATE TABLE IF NOT EXISTS winners (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    attempt INTEGER,
    PRIMARY KEY (session_id, turn)
);
CREATE TABLE IF NOT EXISTS names (
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (name, kind, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS names_by_memory ON names(memory_id);
CREATE TABLE IF NOT EXISTS pending (
    token TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS stale (
    memory_id TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    marked_by TEXT NOT NULL,
    session_id TEXT,
    turn INTEGER,
    marked_at TEXT NOT NULL
);
"""
PREPARE_WAIT_S = 30.0
# Columns added after the first stores were made: (table, column, declaration).
_ADDED_COLUMNS = (
    ("memories", "vector", "BLOB"),
    ("winners", "attempt", "INTEGER"),
    ("memories", "indexed", "TEXT"),
    ("memories", "length", "INTEGER"),
    ("sources", "extra", "TEXT NOT NULL DEFAULT '{}'"),
    ("memories", "day", "TEXT"),
)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class IndexFile:
    """The open index file, thread-safe; the parts of the index (records, search, values) build on it."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()  # held through a batch, whose writes take it again
        self._batched = False
        self.path = None if str(path) == ":memory:" else path  # None: an index held in memory
        self._kept_rows = 0
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        try:
            self._prepare()
        except sqlite3.DatabaseError as error:  # SQLite reads the header first: a damaged file stays as is
            self._db.close()
            if isinstance(error, sqlite3.OperationalError):
                raise
            raise MemoryStoreError(
                f"the memory index at {path} is damaged ({error}); it was left as it is: restore it from a "
                "backup, or move it aside to start an empty one"
            ) from error
        self.vectors = VectorMatrix()

    def _prepare(self) -> None:
        """The schema, in WAL mode. Processes that open a new index at once race for the switch to WAL,
        which SQLite answers with "database is locked" without waiting for its busy timeout: tried again
        for up to ``PREPARE_WAIT_S``."""
        deadline = time.monotonic() + PREPARE_WAIT_S
        while True:
            try:
                self._db.execute("PRAGMA foreign_keys = ON")
                self._db.executescript(_SCHEMA)
                self._add_missing_columns()
                if self.meta("text_form") != TEXT_FORM:
                    with self._lock:
                        upgrade_text_form(self._db)
                if self.meta("index_form") != INDEX_FORM:
                    with self._lock:
                        upgrade_index(self._db)
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _add_missing_columns(self) -> None:
        """Columns added since a store was made, in one write transaction: processes opening an old index
        at once add each column once (the others find it there)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                # This index's own name: a copy of its vectors kept beside it says whose it is.
                self._db.execute(
                    "INSERT INTO meta VALUES ('index_id', lower(hex(randomblob(16)))) ON CONFLICT DO NOTHING"
                )
                for table, column, declaration in _ADDED_COLUMNS:
                    present = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                    if column not in present:
                        self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            # Keeps the check for memories stored before the index kept vectors instant at any size.
            self._db.execute(
                "CREATE INDEX IF NOT EXISTS memories_without_vector ON memories(id) WHERE vector IS NULL"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS memories_by_day ON memories(day)")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def batch(self) -> Iterator[list[tuple[str, str]]]:
        """The writes made inside commit together at the end (one disk sync rather than one each), or
        not at all; the index is this thread's meanwhile (``add`` answers at once)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._batched = True
            try:
                yield []
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            finally:
                self._batched = False

    @contextlib.contextmanager
    def _atomic(self) -> Iterator[None]:
        """A write that lands whole or not at all: a transaction of its own, or part of a batch's. In a
        batch, only a write's first statement may fail and leave the batch standing (``KeyTaken``: it
        wrote nothing); any later failure ends the batch, which rolls back whole. The caller holds the
        lock."""
        if self._batched:
            yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def meta(self, name: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_meta(self, name: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def empty(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None

    def _bump_generation(self) -> None:
        """Tell every process that holds vectors in memory that some were removed or replaced; the copy
        kept beside the file goes too (what was deleted is not left there)."""
        self._db.execute(BUMP_GENERATION)
        if self.path is not None:
            kept_path(self.path).unlink(missing_ok=True)


def placeholders(ids: Iterable[str]) -> tuple[list[str], str]:
    """The distinct ids, and ``?`` marks for an ``IN (...)`` of them."""
    wanted = list(dict.fromkeys(ids))
    return wanted, ",".join("?" * len(wanted))


def vector_blob(vector: Any) -> bytes | None:
    """A vector as the index stores it: float32 bytes."""
    import numpy as np

    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()

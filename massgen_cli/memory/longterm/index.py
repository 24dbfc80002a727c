"""The memory index: a SQLite file beside the vector store that knows each memory's key, its
sources (who recorded it, in which session, turn and attempt), its vector, the winners of turns, and
which embedder built the store. Keys make recording idempotent; sources make retrieval turn-aware.

Both rankings run here with the search's filter inside them: BM25 over FTS5 with the filter in the
same query, and exact similarity over the vectors of the memories the filter allows. Writes that span
the vector store and the index are journalled (``pending``) so a process that dies half-way is
reconciled on the next open."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.filters import SearchFilter
from massgen_cli.memory.longterm.vectors import VectorMatrix

_SCHEMA = """
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
    extra TEXT NOT NULL DEFAULT '{}',
    vector BLOB
);
CREATE TABLE IF NOT EXISTS sources (
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
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
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(id UNINDEXED, body, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS winners (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    attempt INTEGER,
    PRIMARY KEY (session_id, turn)
);
CREATE TABLE IF NOT EXISTS pending (
    token TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    started_at TEXT NOT NULL
);
"""
PREPARE_WAIT_S = 30.0
_MEMORY_COLUMNS = "id, key, text, domain, task_type, role, created_at, expires_at, extra"
# Columns added after the first stores were made: (table, column, declaration).
_ADDED_COLUMNS = (("memories", "vector", "BLOB"), ("winners", "attempt", "INTEGER"))


@dataclass(frozen=True)
class Source:
    """Who recorded a memory, and when in the session."""

    agent_id: str
    session_id: str
    turn: int
    attempt: int


@dataclass(frozen=True)
class IndexedMemory:
    id: str
    key: str
    text: str
    domain: str
    task_type: str
    role: str
    created_at: str
    expires_at: float | None
    extra: dict[str, Any]
    sources: tuple[Source, ...]

    @property
    def first(self) -> Source:
        return self.sources[0]


_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)


def fts_query(text: str) -> str:
    """An FTS5 query that matches any of the text's words (quoted, so no word is read as an operator)."""
    words = dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)
    return " OR ".join(f'"{word}"' for word in words)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class MemoryIndex:
    """Thread-safe access to the index file (several processes may share it: SQLite WAL)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
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
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _add_missing_columns(self) -> None:
        with self._lock:
            for table, column, declaration in _ADDED_COLUMNS:
                present = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            # Keeps the check for memories stored before the index kept vectors instant at any size.
            self._db.execute(
                "CREATE INDEX IF NOT EXISTS memories_without_vector ON memories(id) WHERE vector IS NULL"
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()

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

    def id_for_key(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT id FROM memories WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None:
        """A new memory, its first source, its vector and its lexical entry (``fields["indexed"]``, else
        the text), in one transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        memory_id,
                        key,
                        text,
                        fields["domain"],
                        fields["task_type"],
                        fields["role"],
                        now_iso(),
                        fields.get("expires_at"),
                        json.dumps(fields.get("extra", {})),
                        vector_blob(vector),
                    ),
                )
                self._insert_source(memory_id, source)
                self._db.execute(
                    "INSERT INTO memories_fts VALUES (?, ?)", (memory_id, fields.get("indexed") or text)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
            "INSERT OR IGNORE INTO sources VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, source.agent_id, source.session_id, source.turn, source.attempt, now_iso()),
        )
        return cursor.rowcount > 0

    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]:
        wanted, marks = _placeholders(ids)
        if not wanted:
            return {}
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", wanted
            ).fetchall()
            sources = self._db.execute(
                "SELECT memory_id, agent_id, session_id, turn, attempt FROM sources "
                f"WHERE memory_id IN ({marks}) ORDER BY rowid",
                wanted,
            ).fetchall()
        return _assemble(rows, sources)

    def all(self, *, session_id: str | None = None, agent_id: str | None = None) -> list[IndexedMemory]:
        """Every memory (optionally one session's or one agent's), oldest first."""
        query = "SELECT DISTINCT memory_id FROM sources WHERE 1=1"
        params: list[Any] = []
        if session_id:
            query, params = query + " AND session_id = ?", [*params, session_id]
        if agent_id:
            query, params = query + " AND agent_id = ?", [*params, agent_id]
        with self._lock:
            ids = [row[0] for row in self._db.execute(query, params)]
        found = self.get(ids)
        return sorted(found.values(), key=lambda memory: memory.created_at)

    def delete(self, ids: Iterable[str]) -> None:
        """Forget memories; each id stays journalled (``pending`` kind ``delete``) until its vector is
        gone from the vector store too (``finish``)."""
        wanted, marks = _placeholders(ids)
        if not wanted:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR IGNORE INTO pending VALUES (?, 'delete', ?)", [(i, now_iso()) for i in wanted]
                )
                self._db.execute(f"DELETE FROM memories WHERE id IN ({marks})", wanted)
                self._db.execute(f"DELETE FROM memories_fts WHERE id IN ({marks})", wanted)
                self._bump_generation()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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

    def has(self, memory_id: str) -> bool:
        with self._lock:
            return (
                self._db.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None
            )

    def lexical(self, query: str, limit: int, scope: SearchFilter | None = None) -> list[tuple[str, float]]:
        """``(id, BM25 score)`` of the memories ``scope`` allows that best match ``query``'s words, best
        first (FTS5's ``bm25`` is negated so that higher is better)."""
        terms = fts_query(query)
        if not terms:
            return []
        condition, params = (scope or SearchFilter()).memory_condition()
        sql = (
            "SELECT f.id, -bm25(memories_fts) FROM memories_fts f JOIN memories m ON m.id = f.id "
            f"WHERE memories_fts MATCH ? AND {condition} ORDER BY bm25(memories_fts) LIMIT ?"
        )
        with self._lock:
            return [(row[0], row[1]) for row in self._db.execute(sql, [terms, *params, limit])]

    def dense(
        self, query_vector: Any, limit: int, scope: SearchFilter | None = None
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the memories ``scope`` allows whose vectors are most like ``query_vector``,
        best first."""
        condition, params = (scope or SearchFilter()).memory_condition()
        with self._lock:
            self._sync_vectors()
            allowed = [
                row[0]
                for row in self._db.execute(f"SELECT m.rowid FROM memories m WHERE {condition}", params)
            ]
            return self.vectors.top(query_vector, allowed, limit)  # agents search from several threads

    def _sync_vectors(self) -> None:
        """Bring the in-memory vectors up to date with the file (another process may have written)."""
        generation = self._db.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        generation = generation[0] if generation else "0"
        if generation != self.vectors.generation:
            self.vectors.reset(generation)
        rows = self._db.execute(
            "SELECT rowid, id, vector FROM memories WHERE rowid > ? AND vector IS NOT NULL ORDER BY rowid",
            (self.vectors.last_rowid,),
        )
        self.vectors.extend(rows)

    def _bump_generation(self) -> None:
        self._db.execute(
            "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT (name) DO UPDATE "
            "SET value = CAST(value AS INTEGER) + 1"
        )

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        """``(id, indexed text)`` of memories stored before the index kept vectors."""
        with self._lock:
            ids = [
                row[0]
                for row in self._db.execute("SELECT id FROM memories WHERE vector IS NULL LIMIT ?", (limit,))
            ]
            if not ids:
                return []
            _, marks = _placeholders(ids)
            return self._db.execute(
                f"SELECT id, body FROM memories_fts WHERE id IN ({marks})", ids
            ).fetchall()

    def set_vectors(self, vectors: dict[str, Any]) -> None:
        with self._lock:
            self._db.executemany(
                "UPDATE memories SET vector = ? WHERE id = ?",
                [(vector_blob(v), i) for i, v in vectors.items()],
            )
            self._bump_generation()

    def attribute(self, ids: Iterable[str], scope: SearchFilter | None = None) -> dict[str, Source]:
        """For each memory, the earliest source that ``scope`` counts (the one a hit is shown as)."""
        wanted, marks = _placeholders(ids)
        if not wanted:
            return {}
        scope = scope or SearchFilter()
        condition, params = scope.source_condition()
        sql = (
            f"SELECT s.memory_id, s.agent_id, s.session_id, s.turn, s.attempt FROM sources s {scope.join()} "
            f"WHERE s.memory_id IN ({marks}) AND {condition} ORDER BY s.rowid"
        )
        found: dict[str, Source] = {}
        with self._lock:
            for memory_id, agent_id, session_id, turn, attempt in self._db.execute(sql, [*wanted, *params]):
                found.setdefault(memory_id, Source(agent_id, session_id, turn, attempt))
        return found

    def values(self, ids: Iterable[str], goal: str) -> dict[str, float]:
        """Learned values of ``ids`` for ``goal`` (memories that never learned are left out)."""
        wanted, marks = _placeholders(ids)
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


def _placeholders(ids: Iterable[str]) -> tuple[list[str], str]:
    """The distinct ids, and ``?`` marks for an ``IN (...)`` of them."""
    wanted = list(dict.fromkeys(ids))
    return wanted, ",".join("?" * len(wanted))


def vector_blob(vector: Any) -> bytes | None:
    """A vector as the index stores it: float32 bytes."""
    import numpy as np

    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def _assemble(rows: list[tuple[Any, ...]], sources: list[tuple[Any, ...]]) -> dict[str, IndexedMemory]:
    by_memory: dict[str, list[Source]] = {}
    for memory_id, agent_id, session_id, turn, attempt in sources:
        by_memory.setdefault(memory_id, []).append(Source(agent_id, session_id, turn, attempt))
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

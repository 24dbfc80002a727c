"""The server index's memories and their sources: a memory is added with its first source, vector and
terms in one transaction, under a unique key, so the same content written at once by two processes is
one memory (the second becomes a source of the first). The write journal marks each entry with the
server connection that made it: only entries of connections the server no longer has are finished by
others, whichever machine they ran on."""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.memories import IndexedMemory, Source
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.records import source_row
from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.index.upgrade import day_text
from massgen_cli.memory.longterm.store.server.base import ServerBase, distinct
from massgen_cli.memory.longterm.store.vectors import vector_text

VECTORS_MISSING = "vectors_missing"
"""Set while some memory has no vector (one uploaded from an index that had none): searches look for
them only then, rather than scanning every memory each time."""
MEMORY_COLUMNS = "id, key, text, domain, task_type, role, created_at, expires_at, extra"
SOURCE_COLUMNS = "memory_id, agent_id, session_id, turn, attempt, extra"


class PendingAdds:
    """The adds of a batch, each with its memory id, key and answer, read when the batch ends; only
    the thread that opened the batch adds to it (another thread's writes wait for its end)."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.adds: list[tuple[str, str, Callable[[], list[tuple[Any, ...]]]]] = []

    def mine(self) -> bool:
        return self.thread == threading.get_ident()


class ServerRecords(ServerBase):
    """Memories, their sources and the write journal, on the server."""

    _pending: PendingAdds | None = None
    """The adds of the ``batch`` open, answered when it ends."""

    def id_for_key(self, key: str) -> str | None:
        row = self.server.one(f"SELECT id FROM {self.tables.index} WHERE key = %s", (key,))
        return row[0] if row else None

    def ids_for_keys(self, keys: Iterable[str]) -> dict[str, str]:
        wanted = distinct(keys)
        if not wanted:
            return {}
        found = self.server.rows(f"SELECT key, id FROM {self.tables.index} WHERE key = ANY(%s)", (wanted,))
        return dict(found)

    @contextlib.contextmanager
    def batch(self) -> Iterator[list[tuple[str, str]]]:
        """The writes made inside commit together, or not at all, sent in a pipeline: nothing waits for
        the server until the batch ends. An ``add`` inside is answered then: the ``(memory id, key)`` of
        each one refused because the key was taken (by another process a moment before; it wrote
        nothing) is in the list given, once the block is left."""
        taken: list[tuple[str, str]] = []
        if self._pending is not None and self._pending.mine():  # the outer batch answers, when it ends
            yield taken
            return
        with self.server.transaction(pipelined=True):
            self._pending = pending = PendingAdds()
            try:
                yield taken
                taken += [(memory_id, key) for memory_id, key, added in pending.adds if not added()]
            finally:
                self._pending = None

    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None:
        """A new memory with its vector, first source, terms and names, in one statement; ``KeyTaken``
        when a memory with ``key`` exists (the unique key decides, not a check before the insert: then
        nothing is written). Inside a ``batch`` the answer comes when the batch ends."""
        indexed = fields.get("indexed") or text
        lexical = memory_terms(indexed, text)
        extra, created_at = json.dumps(fields.get("extra", {})), now_iso()
        day = day_text(memory_day(indexed, text, created_at))
        row = (memory_id, key, text, fields["domain"], fields["task_type"], fields["role"], created_at,
               fields.get("expires_at"), extra, indexed, len(lexical), vector_text(vector), day)  # fmt: skip
        counts, names = Counter(lexical), memory_names(indexed, text).rows()
        params = [*row, *source_row(memory_id, source)[1:], list(counts), list(counts.values()),
                  [kind for kind, _ in names], [name for _, name in names]]  # fmt: skip
        added = self.server.rows_later(self._add_statement(), params)
        if vector is None:  # the next dense search makes it
            self.set_meta(VECTORS_MISSING, "1")
        pending = self._pending
        if pending is not None and pending.mine():
            pending.adds.append((memory_id, key, added))
        elif not added():
            raise KeyTaken(key)

    def _add_statement(self) -> str:
        """The memory row with its vector and, from what it returns (nothing when the key is taken), its
        first source, terms and names: one statement, so one wait for the server (PostgreSQL checks the
        references at its end)."""
        tables, marks = self.tables, ", ".join(["%s"] * 11)
        return "WITH " + ", ".join([
            f"m AS (INSERT INTO {tables.index} ({MEMORY_COLUMNS}, indexed, length, vector, day) "
            f"VALUES ({marks}, %s::vector, %s) ON CONFLICT (key) DO NOTHING RETURNING id)",
            f"s AS (INSERT INTO {tables.sources} (memory_id, agent_id, session_id, turn, attempt, "
            "recorded_at, extra) SELECT id, %s, %s, %s, %s, %s, %s FROM m)",
            f"t AS (INSERT INTO {tables.terms} (memory_id, term, tf) SELECT m.id, x.term, x.tf "
            "FROM m, unnest(%s::text[], %s::integer[]) AS x(term, tf))",
            f"n AS (INSERT INTO {tables.names} (memory_id, kind, name) SELECT m.id, x.kind, x.name "
            "FROM m, unnest(%s::text[], %s::text[]) AS x(kind, name))",
        ]) + " SELECT id FROM m"  # fmt: skip

    def extend_expiry(self, memory_id: str, deadline: float | None) -> None:
        """Keep the memory at least until ``deadline`` (None: forever)."""
        self.server.run(
            f"UPDATE {self.tables.index} SET expires_at = CASE WHEN expires_at IS NULL "
            "OR %s::double precision IS NULL THEN NULL ELSE greatest(expires_at, %s) END WHERE id = %s",
            (deadline, deadline, memory_id),
        )

    def add_source(self, memory_id: str, source: Source) -> bool:
        """Another recording of the same content; False if this exact source was known."""
        return bool(self.server.rows(f"{self._source_insert()} RETURNING 1", source_row(memory_id, source)))

    def _source_insert(self) -> str:
        return (
            f"INSERT INTO {self.tables.sources} (memory_id, agent_id, session_id, turn, attempt, "
            "recorded_at, extra) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
        )

    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]:
        wanted = distinct(ids)
        if not wanted:
            return {}
        rows = self.server.rows(
            f"SELECT {MEMORY_COLUMNS} FROM {self.tables.index} WHERE id = ANY(%s)", (wanted,)
        )
        sources = self.server.rows(
            f"SELECT {SOURCE_COLUMNS} FROM {self.tables.sources} WHERE memory_id = ANY(%s) ORDER BY seq",
            (wanted,),
        )
        return assemble(rows, sources)

    def all(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        """Every memory (optionally one session's or one agent's), oldest first; those marked stale only
        with ``include_stale``."""
        query = f"SELECT DISTINCT memory_id FROM {self.tables.sources} WHERE true"
        params: list[Any] = []
        if not include_stale:
            query += f" AND memory_id NOT IN (SELECT memory_id FROM {self.tables.stale})"
        if session_id:
            query, params = query + " AND session_id = %s", [*params, session_id]
        if agent_id:
            query, params = query + " AND agent_id = %s", [*params, agent_id]
        found = self.get(row[0] for row in self.server.rows(query, params))
        return sorted(found.values(), key=lambda memory: memory.created_at)

    def has(self, memory_id: str) -> bool:
        return self.server.one(f"SELECT 1 FROM {self.tables.index} WHERE id = %s", (memory_id,)) is not None

    def delete(self, ids: Iterable[str]) -> None:
        """Forget memories (their sources, terms, values and marks go with them); each id stays
        journalled until its vector is gone from mem0's table too (``finish``)."""
        wanted = distinct(ids)
        if not wanted:
            return
        with self.server.transaction():
            self.server.many(
                f"INSERT INTO {self.tables.pending} VALUES (%s, 'delete', %s, pg_backend_pid()) "
                "ON CONFLICT (token) DO NOTHING",
                [(memory_id, now_iso()) for memory_id in wanted],
            )
            self.server.run(f"DELETE FROM {self.tables.index} WHERE id = ANY(%s)", (wanted,))

    def begin(self, token: str, kind: str = "write") -> None:
        """Journal a write to mem0's table before it starts, as this connection's."""
        self.server.run(
            f"INSERT INTO {self.tables.pending} VALUES (%s, %s, %s, pg_backend_pid()) ON CONFLICT (token) "
            "DO UPDATE SET kind = excluded.kind, started_at = excluded.started_at, owner = excluded.owner",
            (token, kind, now_iso()),
        )

    def finish(self, token: str) -> None:
        self.server.run(f"DELETE FROM {self.tables.pending} WHERE token = %s", (token,))

    def pending(self) -> list[tuple[str, str]]:
        """``(token, kind)`` of writes and deletes begun by connections that are gone (a process that
        died, on any machine); those of live processes are theirs to finish."""
        rows = self.server.rows(
            f"SELECT token, kind FROM {self.tables.pending} WHERE owner IS NULL "
            "OR owner NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL) ORDER BY started_at"
        )
        return [(token, kind) for token, kind in rows]


def assemble(rows: list[tuple[Any, ...]], sources: list[tuple[Any, ...]]) -> dict[str, IndexedMemory]:
    by_memory: dict[str, list[Source]] = {}
    for row in sources:
        by_memory.setdefault(row[0], []).append(source_from_row(row))
    return {
        memory_id: IndexedMemory(
            memory_id,
            key,
            text,
            domain,
            task_type,
            role,
            created_at,
            expires_at,
            json.loads(extra),
            tuple(by_memory.get(memory_id, ())),
        )
        for memory_id, key, text, domain, task_type, role, created_at, expires_at, extra in rows
    }


def source_from_row(row: tuple[Any, ...]) -> Source:
    """A source from a row of ``SOURCE_COLUMNS``."""
    _, agent_id, session_id, turn, attempt, extra = row
    return Source(agent_id, session_id, int(turn), int(attempt), json.loads(extra) if extra else {})

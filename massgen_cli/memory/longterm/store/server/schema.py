"""The index's tables on the server, named after the collection (``<collection>_index``,
``<collection>_sources``, ...) beside mem0's own table, created once by whichever process comes
first (under an advisory lock, so processes starting together do not race in the catalog)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.retrieve.sql import SqlDialect
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.index.upgrade import INDEX_FORM, day_text
from massgen_cli.memory.longterm.store.server.connection import ServerConnection
from massgen_cli.memory.longterm.store.server.reshape import SERVER_FORM, reshape

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")


_PARTS = (
    "meta", "index", "statistics", "terms", "names", "sources", "values", "winners", "stale", "pending",
    "sessions",
)  # fmt: skip


_DDL = """
CREATE TABLE IF NOT EXISTS {meta} (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {index} (
    seq bigserial UNIQUE,
    id text PRIMARY KEY,
    key text UNIQUE NOT NULL,
    text text NOT NULL,
    domain text NOT NULL,
    task_type text NOT NULL,
    role text NOT NULL,
    created_at text NOT NULL,
    expires_at double precision,
    extra text NOT NULL DEFAULT '{{}}',
    indexed text,
    length integer NOT NULL DEFAULT 0,
    vector vector,
    day text
);
CREATE TABLE IF NOT EXISTS {statistics} (
    slot integer PRIMARY KEY,
    memories bigint NOT NULL,
    length bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {terms} (
    memory_id text NOT NULL REFERENCES {index}(id) ON DELETE CASCADE,
    term text NOT NULL,
    tf integer NOT NULL,
    PRIMARY KEY (term, memory_id) INCLUDE (tf)
);
CREATE INDEX IF NOT EXISTS "{collection}_terms_by_memory" ON {terms}(memory_id);
CREATE TABLE IF NOT EXISTS {names} (
    memory_id text NOT NULL REFERENCES {index}(id) ON DELETE CASCADE,
    kind text NOT NULL,
    name text NOT NULL,
    PRIMARY KEY (name, kind, memory_id)
);
CREATE INDEX IF NOT EXISTS "{collection}_names_by_memory" ON {names}(memory_id);
CREATE TABLE IF NOT EXISTS {sources} (
    seq bigserial PRIMARY KEY,
    memory_id text NOT NULL REFERENCES {index}(id) ON DELETE CASCADE,
    agent_id text NOT NULL,
    session_id text NOT NULL,
    turn bigint NOT NULL,
    attempt bigint NOT NULL,
    recorded_at text NOT NULL,
    extra text NOT NULL DEFAULT '{{}}',
    UNIQUE (memory_id, agent_id, session_id, turn, attempt)
);
CREATE INDEX IF NOT EXISTS "{collection}_sources_by_session" ON {sources}(session_id, agent_id);
CREATE TABLE IF NOT EXISTS {values} (
    memory_id text NOT NULL REFERENCES {index}(id) ON DELETE CASCADE,
    goal text NOT NULL,
    value double precision NOT NULL,
    updates integer NOT NULL DEFAULT 0,
    updated_at text NOT NULL,
    PRIMARY KEY (memory_id, goal)
);
CREATE TABLE IF NOT EXISTS {winners} (
    session_id text NOT NULL,
    turn bigint NOT NULL,
    agent_id text NOT NULL,
    attempt bigint,
    PRIMARY KEY (session_id, turn)
);
CREATE TABLE IF NOT EXISTS {stale} (
    memory_id text PRIMARY KEY REFERENCES {index}(id) ON DELETE CASCADE,
    reason text NOT NULL,
    marked_by text NOT NULL,
    session_id text,
    turn bigint,
    marked_at text NOT NULL
);
CREATE TABLE IF NOT EXISTS {pending} (
    token text PRIMARY KEY,
    kind text NOT NULL,
    started_at text NOT NULL,
    owner integer
);
CREATE TABLE IF NOT EXISTS {sessions} (
    session_id text PRIMARY KEY,
    turns_started bigint NOT NULL DEFAULT 0,
    record text,
    state text NOT NULL DEFAULT '{{}}',
    updated_at text NOT NULL
);
"""
"""The tables of one collection's index: ``{collection}`` and each of ``_PARTS`` as its quoted table name."""


@dataclass(frozen=True)
class ServerTables:
    """The table names of one collection's index, quoted: ``"<collection>_<part>"``."""

    collection: str
    meta: str = field(init=False)
    index: str = field(init=False)
    statistics: str = field(init=False)
    terms: str = field(init=False)
    names: str = field(init=False)
    sources: str = field(init=False)
    values: str = field(init=False)
    winners: str = field(init=False)
    stale: str = field(init=False)
    pending: str = field(init=False)
    sessions: str = field(init=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.collection):
            raise MemoryStoreError(
                f"persistent_memory.pgvector.collection_name '{self.collection}' must be letters, digits "
                "and underscores (at most 41), starting with a letter or underscore"
            )
        for part in _PARTS:
            object.__setattr__(self, part, f'"{self.collection}_{part}"')

    @property
    def dialect(self) -> SqlDialect:
        return SqlDialect(
            mark="%s",
            sources=self.sources,
            winners=self.winners,
            stale=self.stale,
            names=self.names,
            arrays=True,
        )

    def ddl(self) -> str:
        """The statements that create every table and index (each only if it is missing)."""
        return _DDL.format(collection=self.collection, **{part: getattr(self, part) for part in _PARTS})


def create_tables(connection: ServerConnection, tables: ServerTables) -> None:
    """Every table of the index, once, reshaped when an earlier version made them (``reshape``), and
    what tables of an earlier index form lack (``_upgrade``); the vector extension must be installed in
    the database. Opening a current store reads its forms and changes nothing: a ``CREATE INDEX IF NOT
    EXISTS`` locks its table even when the index exists, and beside an importer's batch that lock
    deadlocked and killed the writer. Making or reshaping runs under an advisory lock, by one process;
    another that comes meanwhile waits for it and finds the store current."""
    if _current(connection, tables):
        return
    with connection.transaction():
        connection.run("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"massgen:{tables.collection}",))
        if _current(connection, tables):
            return
        for statement in filter(str.strip, tables.ddl().split(";")):
            connection.run(statement)
        if connection.one(f"SELECT value FROM {tables.meta} WHERE name = 'server_form'") != (SERVER_FORM,):
            reshape(connection, tables)
        found = connection.one(f"SELECT value FROM {tables.meta} WHERE name = 'index_form'")
        if found is None or found[0] != INDEX_FORM:
            _upgrade(connection, tables)


def _current(connection: ServerConnection, tables: ServerTables) -> bool:
    """Whether the tables exist in this version's server form and index form (read, nothing locked)."""
    if connection.one("SELECT to_regclass(%s)", (tables.meta,)) in (None, (None,)):
        return False
    forms = dict(
        connection.rows(f"SELECT name, value FROM {tables.meta} WHERE name IN ('server_form', 'index_form')")
    )
    return forms.get("server_form") == SERVER_FORM and forms.get("index_form") == INDEX_FORM


def _upgrade(connection: ServerConnection, tables: ServerTables) -> None:
    """What tables of an earlier form lack: speakers (``record.names``) for every memory that has none
    (the names of mentioned words, which an earlier form kept, gone),
    terms made again for the memories whose terms today's form counts otherwise (the dates they name:
    ``record.dates``), and each memory's day (a column tables of an earlier form lack; altered only
    here, as an ALTER locks the table even when it changes nothing)."""
    connection.run(f"ALTER TABLE {tables.index} ADD COLUMN IF NOT EXISTS day text")
    connection.run(f'CREATE INDEX IF NOT EXISTS "{tables.collection}_index_by_day" ON {tables.index}(day)')
    connection.run(f"DELETE FROM {tables.names} WHERE kind = 'entity'")
    rows = connection.rows(
        f"SELECT m.id, coalesce(m.indexed, m.text), m.text, m.length, m.created_at, EXISTS (SELECT 1 "
        f"FROM {tables.names} n WHERE n.memory_id = m.id) FROM {tables.index} m"
    )
    connection.many(
        f"INSERT INTO {tables.names} VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        [
            (i, kind, name)
            for i, indexed, text, _, _, named in rows
            if not named
            for kind, name in memory_names(indexed, text).rows()
        ],
    )
    for memory_id, indexed, text, length, _, _ in rows:
        lexical = memory_terms(indexed, text)
        if len(lexical) != length:
            connection.run(f"DELETE FROM {tables.terms} WHERE memory_id = %s", (memory_id,))
            connection.many(
                f"INSERT INTO {tables.terms} (memory_id, term, tf) VALUES (%s, %s, %s)",
                [(memory_id, term, count) for term, count in Counter(lexical).items()],
            )
            connection.run(f"UPDATE {tables.index} SET length = %s WHERE id = %s", (len(lexical), memory_id))
    connection.many(
        f"UPDATE {tables.index} SET day = %s WHERE id = %s",
        [(day_text(memory_day(indexed, text, created)), i) for i, indexed, text, _, created, _ in rows],
    )
    connection.run(
        f"INSERT INTO {tables.meta} VALUES ('index_form', %s) ON CONFLICT (name) DO UPDATE "
        "SET value = excluded.value",
        (INDEX_FORM,),
    )

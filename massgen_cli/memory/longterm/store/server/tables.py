"""The index's tables on the server, named after the collection (``<collection>_index``,
``<collection>_sources``, ...) beside mem0's own table: their names and the statements that make them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.retrieve.sql import SqlDialect

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

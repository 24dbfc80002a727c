"""The server index's tables as searches read them fastest, made once from the tables an earlier
version made (under ``create_tables``'s lock, in its transaction):

- each memory's vector sits in its row of the index table (a search reads a memory's row once, for its
  scope, key, length and vector, where it read two tables before);
- the terms' key holds their counts too (the lexical ranking reads the key alone, not the rows);
- the store's statistics (how many memories, how many terms in all) are kept in a small table as
  memories come and go, so a search of the whole store no longer counts every memory. Each server
  connection adds to its own slot, when its transaction commits: writers at once wait for no one.
"""

from __future__ import annotations

from massgen_cli.memory.longterm.store.server.connection import ServerConnection
from massgen_cli.memory.longterm.store.server.tables import ServerTables

SERVER_FORM = "2"
"""The form ``reshape`` makes; kept in the collection's meta table as ``server_form``."""
SLOTS = 16
"""Rows of the statistics table, one per connection modulo this many."""


def reshape(connection: ServerConnection, tables: ServerTables) -> None:
    """Make tables of an earlier form into this one (harmless on tables of this form)."""
    _move_vectors(connection, tables)
    _cover_terms(connection, tables)
    _count(connection, tables)
    connection.run(
        f"INSERT INTO {tables.meta} VALUES ('server_form', %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (SERVER_FORM,),
    )


def _move_vectors(connection: ServerConnection, tables: ServerTables) -> None:
    """The vectors of the ``<collection>_vectors`` table an earlier version kept, into the index."""
    earlier = f'"{tables.collection}_vectors"'
    connection.run(f"ALTER TABLE {tables.index} ADD COLUMN IF NOT EXISTS vector vector")
    found = connection.one("SELECT to_regclass(%s) IS NOT NULL", (earlier,))
    if found and found[0]:
        connection.run(f"UPDATE {tables.index} m SET vector = x.vector FROM {earlier} x WHERE x.id = m.id")
        connection.run(f"DROP TABLE {earlier}")


def _cover_terms(connection: ServerConnection, tables: ServerTables) -> None:
    key = f'"{tables.collection}_terms_pkey"'
    covering = connection.one(
        "SELECT indnkeyatts < indnatts FROM pg_index WHERE indexrelid = to_regclass(%s)", (key,)
    )
    if not (covering and covering[0]):
        connection.run(f"ALTER TABLE {tables.terms} DROP CONSTRAINT IF EXISTS {key}")
        connection.run(
            f"ALTER TABLE {tables.terms} ADD CONSTRAINT {key} PRIMARY KEY (term, memory_id) INCLUDE (tf)"
        )


def _count(connection: ServerConnection, tables: ServerTables) -> None:
    """The trigger that keeps the statistics, then the statistics of what the table holds: the trigger
    locks the table against writers until the transaction ends, so nothing is counted twice or missed."""
    trigger, function = f'"{tables.collection}_counted"', f'"{tables.collection}_count"'
    schema = connection.one("SELECT quote_ident(current_schema())")
    statistics = f"{schema[0] if schema else 'public'}.{tables.statistics}"
    connection.run(f"DROP TRIGGER IF EXISTS {trigger} ON {tables.index}")
    connection.run(
        f"""CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $count$
DECLARE
    added bigint := 0;
    grown bigint := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        added := 1; grown := NEW.length;
    ELSIF TG_OP = 'DELETE' THEN
        added := -1; grown := -OLD.length;
    ELSE
        grown := NEW.length - OLD.length;
    END IF;
    INSERT INTO {statistics} AS s VALUES (pg_backend_pid() % {SLOTS}, added, grown)
    ON CONFLICT (slot) DO UPDATE SET memories = s.memories + excluded.memories,
        length = s.length + excluded.length;
    RETURN NULL;
END
$count$"""
    )
    connection.run(
        f"CREATE CONSTRAINT TRIGGER {trigger} AFTER INSERT OR DELETE OR UPDATE OF length ON {tables.index} "
        f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {function}()"
    )
    connection.run(f"DELETE FROM {tables.statistics}")
    connection.run(
        f"INSERT INTO {tables.statistics} SELECT 0, count(*), coalesce(sum(length), 0) FROM {tables.index}"
    )

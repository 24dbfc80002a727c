"""The index's tables on the server (``tables``), created once by whichever process comes first (under an
advisory lock, so processes starting together do not race in the catalog), reshaped and upgraded when an
earlier version made them."""

from __future__ import annotations

from collections import Counter

from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.index.upgrade import INDEX_FORM, day_text
from massgen_cli.memory.longterm.store.server.connection import ServerConnection
from massgen_cli.memory.longterm.store.server.reshape import SERVER_FORM, reshape
from massgen_cli.memory.longterm.store.server.tables import ServerTables


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

"""What every part of the server index builds on: the connection, the table names and the metadata."""

from __future__ import annotations

from collections.abc import Iterable

from massgen_cli.memory.longterm.store.server.connection import ServerConnection
from massgen_cli.memory.longterm.store.server.schema import create_tables
from massgen_cli.memory.longterm.store.server.tables import ServerTables


def open_tables(connection_string: str, collection: str) -> tuple[ServerTables, ServerConnection]:
    """A connection to the server with the collection's tables made (closed again when they cannot be)."""
    tables, server = ServerTables(collection), ServerConnection(connection_string)
    try:
        create_tables(server, tables)
    except BaseException:
        server.close()
        raise
    return tables, server


class ServerBase:
    """The open index on the server (its tables exist once this is built)."""

    def __init__(self, connection_string: str, collection: str):
        self.tables, self.server = open_tables(connection_string, collection)

    def close(self) -> None:
        self.server.close()

    def identity(self) -> str:
        """Which server and collection this is, without secrets: ``host:port/db collection``."""
        from massgen_cli.memory.longterm.store.vector_stores import database_place

        return f"{database_place(self.server.conninfo)} {self.tables.collection}"

    def meta(self, name: str) -> str | None:
        row = self.server.one(f"SELECT value FROM {self.tables.meta} WHERE name = %s", (name,))
        return row[0] if row else None

    def set_meta(self, name: str, value: str) -> None:
        self.server.run(
            f"INSERT INTO {self.tables.meta} VALUES (%s, %s) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, value),
        )

    def empty(self) -> bool:
        return self.server.one(f"SELECT 1 FROM {self.tables.index} LIMIT 1") is None

    def count(self) -> int:
        row = self.server.one(f"SELECT count(*) FROM {self.tables.index}")
        return int(row[0]) if row else 0


def distinct(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))

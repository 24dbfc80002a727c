"""The server's memory index as one object, with what the local index offers (``StoreIndex``)."""

from __future__ import annotations

from massgen_cli.memory.longterm.store.server.learned import ServerLearned
from massgen_cli.memory.longterm.store.server.records import ServerRecords
from massgen_cli.memory.longterm.store.server.search import ServerSearch


class ServerIndex(ServerRecords, ServerSearch, ServerLearned):
    """The index's tables in a PostgreSQL database, beside mem0's table of the same collection."""

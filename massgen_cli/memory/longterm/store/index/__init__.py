"""The memory index: a SQLite file beside the vector store that knows each memory's key, its sources
(who recorded it, in which session, turn and attempt), its vector, the winners of turns, and which
embedder built the store. Keys make recording idempotent; sources make retrieval turn-aware. Its parts:
``schema`` (the file), ``records`` (memories, sources, the write journal), ``search`` (both rankings
under a filter), ``speakers`` (the speakers a query names), ``values`` (learned values and winners)
and ``stale`` (memories agents marked stale)."""

from __future__ import annotations

from massgen_cli.memory.longterm.store.index.export import IndexExport
from massgen_cli.memory.longterm.store.index.search import IndexSearch
from massgen_cli.memory.longterm.store.index.speakers import IndexSpeakers
from massgen_cli.memory.longterm.store.index.stale import IndexStale
from massgen_cli.memory.longterm.store.index.values import IndexValues


class MemoryIndex(IndexExport, IndexSearch, IndexSpeakers, IndexValues, IndexStale):
    """The whole index over one file (several processes may share it: SQLite WAL)."""


__all__ = ["MemoryIndex"]

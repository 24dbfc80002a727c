"""What every memory index offers, the local one (SQLite in the state folder) and a server's
(PostgreSQL): the rest of the store speaks to an index through this alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from massgen_cli.memory.longterm.record.memories import IndexedMemory, Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames
from massgen_cli.memory.longterm.retrieve.ranking import Method
from massgen_cli.memory.longterm.store.index.stale import StaleMark


class KeyTaken(Exception):
    """Another process stored the same content (the same key) a moment ago."""


class Opened(Protocol):
    """The open index: its metadata, its size, and closing it."""

    def meta(self, name: str) -> str | None: ...
    def set_meta(self, name: str, value: str) -> None: ...
    def count(self) -> int: ...
    def empty(self) -> bool: ...
    def close(self) -> None: ...


class KeptRecords(Protocol):
    """Memories with their keys and sources, and the write journal."""

    def id_for_key(self, key: str) -> str | None: ...
    def ids_for_keys(self, keys: Iterable[str]) -> dict[str, str]:
        """The id of each of ``keys`` the index holds (one read for many: bulk writes)."""

    def batch(self) -> AbstractContextManager[list[tuple[str, str]]]:
        """Writes made inside land together, in one commit, or not at all (an ``add`` refused with
        ``KeyTaken`` leaves the others standing); where the index has no transactions, each as it is
        made. An index that answers ``add`` only when the batch ends (the server's, whose writes are
        pipelined) does not raise ``KeyTaken`` inside: the ``(memory id, key)`` of each refused add is
        in the list given, once the block is left."""

    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None:
        """Raises ``KeyTaken`` when a memory with ``key`` exists."""

    def extend_expiry(self, memory_id: str, deadline: float | None) -> None: ...
    def add_source(self, memory_id: str, source: Source) -> bool: ...
    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]: ...
    def all(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]: ...
    def has(self, memory_id: str) -> bool: ...
    def delete(self, ids: Iterable[str]) -> None: ...
    def begin(self, token: str, kind: str = "write") -> None: ...
    def finish(self, token: str) -> None: ...
    def pending(self) -> list[tuple[str, str]]: ...


class Ranking(Protocol):
    """The one ranking every index computes alike, the context of a hit, the vectors it reads, and
    attribution."""

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, method: Method
    ) -> list[tuple[str, float]]:
        """``(id, score)`` inside ``scope``, best first (equal scores in key order): for ``hybrid`` the
        ``pool`` best of each ranking, fused by reciprocal rank (``retrieve.ranking``); for ``dense``
        or ``lexical`` the ``pool`` best of that ranking alone, with its own scores."""

    def speakers(self, names: QueryNames) -> frozenset[str]:
        """Those of the names a query gives that are the speaker of a memory in the index (whatever
        the scope): what the query is embedded without (``retrieve.names.without_speakers``)."""

    def neighbours(
        self, memory_id: str, source: Source, count: int, scope: SearchFilter
    ) -> list[tuple[int, str, Source]]:
        """``(offset, memory id, source)`` of up to ``count`` memories on each side of ``source`` of
        ``memory_id`` in its session, in session order (``retrieve.context``)."""

    def warm(self) -> None:
        """Read ahead what the dense ranking reads (the local index's vectors), while the query is
        being embedded; an index that ranks on a server has nothing to read."""

    def without_vectors(self, limit: int) -> list[tuple[str, str]]: ...
    def set_vectors(self, vectors: dict[str, Any]) -> None: ...
    def attribute(self, ids: Iterable[str], scope: SearchFilter | None = None) -> dict[str, Source]: ...


class Learned(Protocol):
    """Learned values, the winners of turns and stale marks."""

    def values(self, ids: Iterable[str], goal: str) -> dict[str, float]: ...
    def set_value(self, memory_id: str, goal: str, value: float) -> None: ...
    def ranked_values(self, goal: str, limit: int) -> list[tuple[str, float, int]]: ...
    def record_winner(
        self, session_id: str, turn: int, agent_id: str, attempt: int | None = None
    ) -> None: ...

    def mark_stale(self, mark: StaleMark) -> bool: ...
    def stale_marks(self, ids: Iterable[str] | None = None) -> dict[str, StaleMark]: ...


class StoreIndex(Opened, KeptRecords, Ranking, Learned, Protocol):
    """Memories with their keys, sources, vectors and terms; learned values, winners and stale marks;
    the write journal; and the one ranking every index computes alike."""

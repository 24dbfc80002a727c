"""Searching the server index: the whole ranking in one statement (``ranking``), its two halves for
those who ask for one, and the source each hit is shown as."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.context import nearest
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames
from massgen_cli.memory.longterm.retrieve.ranking import Method
from massgen_cli.memory.longterm.store.index.context import (
    position_params,
    side_params,
    side_query,
    source_position,
)
from massgen_cli.memory.longterm.store.server.base import ServerBase, distinct
from massgen_cli.memory.longterm.store.server.ranking import ranking_statement
from massgen_cli.memory.longterm.store.server.records import SOURCE_COLUMNS, VECTORS_MISSING, source_from_row
from massgen_cli.memory.longterm.store.vectors import vector_text


class ServerSearch(ServerBase):
    """Rankings computed by the server, under the search's filter."""

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, method: Method
    ) -> list[tuple[str, float]]:
        """As ``Ranking.ranked`` says, computed by the server (for ``hybrid`` the dense, lexical and
        named rankings fused there): one statement, one round trip."""
        statement = ranking_statement(self.tables, query, vector, pool, scope, method)
        sql, params = statement.select(
            'SELECT id, score FROM fused ORDER BY score DESC, place, key COLLATE "C"'
        )
        return [(memory_id, float(score)) for memory_id, score in self.server.rows(sql, params)]

    def speakers(self, names: QueryNames) -> frozenset[str]:
        """Those of ``names``' speakers that some memory of the index is said by."""
        if not names:
            return frozenset()
        rows = self.server.rows(
            f"SELECT DISTINCT name FROM {self.tables.names} WHERE kind = 'speaker' AND name = ANY(%s)",
            [list(names.speakers)],
        )
        return frozenset(row[0] for row in rows)

    def neighbours(
        self, memory_id: str, source: Source, count: int, scope: SearchFilter
    ) -> list[tuple[int, str, Source]]:
        """``(offset, memory id, source)`` of the memories recorded just before and after ``source`` of
        ``memory_id`` in its session (``retrieve.context``), up to ``count`` on each side."""
        dialect = self.tables.dialect
        found = self.server.one(source_position(dialect, "seq"), position_params(memory_id, source))
        if found is None:
            return []
        sides = []
        for after in (False, True):
            sql, params = side_query(scope, dialect, self.tables.index, "seq", after=after)
            rows = self.server.rows(sql, side_params(memory_id, source, found[0], params, count))
            sides.append([(row[0], source_from_row(row)) for row in rows])
        return nearest(memory_id, sides[0], sides[1], count)

    def lexical(self, query: str, limit: int, scope: SearchFilter | None = None) -> list[tuple[str, float]]:
        """The lexical half alone (what the local index's ``lexical`` returns)."""
        return self._alone("lexical", query, None, limit, scope)

    def dense(
        self, query_vector: Any, limit: int, scope: SearchFilter | None = None
    ) -> list[tuple[str, float]]:
        """The dense half alone (what the local index's ``dense`` returns)."""
        return self._alone("dense", "", query_vector, limit, scope)

    def _alone(
        self, method: Method, query: str, vector: Any, limit: int, scope: SearchFilter | None
    ) -> list[tuple[str, float]]:
        statement = ranking_statement(self.tables, query, vector, limit, scope or SearchFilter(), method)
        sql, params = statement.select(f'SELECT id, score FROM {method} ORDER BY score DESC, key COLLATE "C"')
        return [(memory_id, float(score)) for memory_id, score in self.server.rows(sql, params)]

    def warm(self) -> None:
        """The server reads the vectors itself."""

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        """``(id, text)`` of memories without a vector; only looked for while the index notes some."""
        if self.meta(VECTORS_MISSING) is None:
            return []
        rows = self.server.rows(
            f"SELECT id, text FROM {self.tables.index} WHERE vector IS NULL LIMIT %s",
            (limit,),
        )
        if not rows:
            self.server.run(f"DELETE FROM {self.tables.meta} WHERE name = %s", (VECTORS_MISSING,))
        return [(memory_id, text) for memory_id, text in rows]

    def set_vectors(self, vectors: dict[str, Any]) -> None:
        self.server.many(
            f"UPDATE {self.tables.index} SET vector = %s::vector WHERE id = %s",
            [(vector_text(vector), memory_id) for memory_id, vector in vectors.items()],
        )

    def attribute(self, ids: Iterable[str], scope: SearchFilter | None = None) -> dict[str, Source]:
        """For each memory, the earliest source that ``scope`` counts (the one a hit is shown as)."""
        wanted = distinct(ids)
        if not wanted:
            return {}
        scope = scope or SearchFilter()
        condition, params = scope.source_condition(self.tables.dialect)
        columns = ", ".join(f"s.{column.strip()}" for column in SOURCE_COLUMNS.split(","))
        rows = self.server.rows(
            f"SELECT DISTINCT ON (s.memory_id) {columns} FROM {self.tables.sources} s "
            f"{scope.join(self.tables.dialect)} WHERE s.memory_id = ANY(%s) AND {condition} "
            "ORDER BY s.memory_id, s.seq",
            [wanted, *params],
        )
        return {row[0]: source_from_row(row) for row in rows}

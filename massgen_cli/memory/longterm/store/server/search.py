"""Searching the server index: the whole ranking in one statement (``ranking``), its two halves for
those who ask for one, and the source each hit is shown as."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.terms import query_terms
from massgen_cli.memory.longterm.store.server.base import ServerBase, distinct, vector_text
from massgen_cli.memory.longterm.store.server.ranking import (
    Statement,
    add_dense,
    add_empty,
    add_fusion,
    add_lexical,
)
from massgen_cli.memory.longterm.store.server.records import SOURCE_COLUMNS, source_from_row


class ServerSearch(ServerBase):
    """Rankings computed by the server, under the search's filter."""

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, dense_weight: float
    ) -> list[tuple[str, float]]:
        """``(id, fused score)`` of the ``pool`` best of each ranking inside ``scope``, fused, best first
        (equal scores in key order): one statement, one round trip."""
        statement, now = Statement(), time.time()
        wanted = query_terms(query)
        if dense_weight > 0 and vector is not None:
            add_dense(statement, self.tables, scope, vector, pool, now)
        else:
            add_empty(statement, "dense")
        if dense_weight < 1 and wanted:
            add_lexical(statement, self.tables, scope, wanted, pool, now)
        else:
            add_empty(statement, "lexical")
        add_fusion(statement, dense_weight)
        sql, params = statement.select("SELECT id, score FROM fused ORDER BY score DESC, key")
        return [(memory_id, float(score)) for memory_id, score in self.server.rows(sql, params)]

    def lexical(self, query: str, limit: int, scope: SearchFilter | None = None) -> list[tuple[str, float]]:
        """The lexical half alone (what the local index's ``lexical`` returns)."""
        wanted = query_terms(query)
        if not wanted:
            return []
        statement = Statement()
        add_lexical(statement, self.tables, scope or SearchFilter(), wanted, limit, time.time())
        sql, params = statement.select("SELECT id, score FROM lexical ORDER BY score DESC, key")
        return [(memory_id, float(score)) for memory_id, score in self.server.rows(sql, params)]

    def dense(
        self, query_vector: Any, limit: int, scope: SearchFilter | None = None
    ) -> list[tuple[str, float]]:
        """The dense half alone (what the local index's ``dense`` returns)."""
        statement = Statement()
        add_dense(statement, self.tables, scope or SearchFilter(), query_vector, limit, time.time())
        sql, params = statement.select("SELECT id, score FROM dense ORDER BY score DESC, key")
        return [(memory_id, float(score)) for memory_id, score in self.server.rows(sql, params)]

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        rows = self.server.rows(
            f"SELECT id, text FROM {self.tables.index} WHERE vector IS NULL LIMIT %s", (limit,)
        )
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

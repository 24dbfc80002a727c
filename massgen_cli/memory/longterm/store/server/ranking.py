"""The index's ranking as PostgreSQL: the same BM25 (the scope's own statistics; the store's, scored as
FTS5 scores, for a search of the whole store), exact cosine over the vectors, similarity among the
memories the query names, the reciprocal rank fusion of the three and the key order of equal scores
that the local index computes, in one statement, with the scope and turn-aware visibility inside each
ranking.

Each part is a common table expression: ``lexical(id, key, score)``, ``dense(id, key, score)`` and
``named(id, key, score)`` are what the local index's ``lexical`` and ``dense`` return,
``fused(id, key, score)`` what its ``ranked`` returns. The constants are the ones ``index.bm25`` and
``retrieve.ranking`` use."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames, named_condition, query_names
from massgen_cli.memory.longterm.retrieve.ranking import RRF_K, Method
from massgen_cli.memory.longterm.store.index.bm25 import K1, B
from massgen_cli.memory.longterm.store.index.terms import query_terms
from massgen_cli.memory.longterm.store.server.base import vector_text
from massgen_cli.memory.longterm.store.server.schema import ServerTables

_STATISTICS = (
    "stats AS (SELECT count(*)::float8 AS n, coalesce(avg(length), 0)::float8 AS avgdl FROM {memories})"
)
FTS5_IDF_FLOOR = 1e-6
"""FTS5 scores a term found in most memories 1e-6 rather than a negative weight."""


@dataclass
class Statement:
    """Common table expressions and their parameters, in the order they appear."""

    parts: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, part: str, *params: Any) -> None:
        self.parts.append(part)
        self.params.extend(params)

    def select(self, tail: str, *params: Any) -> tuple[str, list[Any]]:
        return "WITH " + ",\n".join(self.parts) + "\n" + tail, [*self.params, *params]


def _length_norm(length: str) -> str:
    return (
        f"{K1} * (1 - {B} + {B} * {length} / (SELECT CASE WHEN avgdl > 0 THEN avgdl ELSE 1 END FROM stats))"
    )


def _term_score(idf: str, length: str) -> str:
    return f"{idf} * h.tf * {K1 + 1} / (h.tf + {_length_norm(length)})"


def add_scope(statement: Statement, tables: ServerTables, scope: SearchFilter, now: float) -> None:
    """``scope``: the memories the search may rank, found once for both rankings."""
    condition, params = scope.memory_condition(now, tables.dialect)
    statement.add(
        f"scope AS MATERIALIZED (SELECT m.id, m.key, m.length FROM {tables.index} m WHERE {condition})",
        *params,
    )


def add_lexical(
    statement: Statement, tables: ServerTables, scope: SearchFilter, wanted: list[str], pool: int
) -> None:
    """``lexical``: BM25 of the ``pool`` memories of ``scope`` best matching the query terms ``wanted``
    (``add_scope`` first)."""
    if scope.restricts_sources:
        _scoped_lexical(statement, tables, wanted, pool)
    else:
        _store_wide_lexical(statement, tables, wanted, pool)


def _scoped_lexical(statement: Statement, tables: ServerTables, wanted: list[str], pool: int) -> None:
    """The scope's own statistics (how many of its memories hold each term, their average length);
    scores divided by the sum of the query terms' weights."""
    statement.add(_STATISTICS.format(memories="scope"))
    statement.add(
        f"hits AS MATERIALIZED (SELECT t.memory_id, t.term, t.tf FROM {tables.terms} t "
        "JOIN scope s ON s.id = t.memory_id WHERE t.term = ANY(%s))",
        wanted,
    )
    statement.add(
        "weights AS (SELECT q.term, ln(1 + ((SELECT n FROM stats) - coalesce(c.holding, 0) + 0.5) "
        "/ (coalesce(c.holding, 0) + 0.5)) AS idf FROM unnest(%s::text[]) AS q(term) "
        "LEFT JOIN (SELECT term, count(*)::float8 AS holding FROM hits GROUP BY term) c USING (term))",
        wanted,
    )
    statement.add(
        f"lexical AS (SELECT s.id, s.key, sum({_term_score('w.idf', 's.length')}) "
        "/ (SELECT CASE WHEN sum(idf) > 0 THEN sum(idf) ELSE 1 END FROM weights) AS score "
        "FROM hits h JOIN scope s ON s.id = h.memory_id JOIN weights w USING (term) "
        "GROUP BY s.id, s.key, s.length ORDER BY score DESC, s.key LIMIT %s)",
        pool,
    )


def _store_wide_lexical(statement: Statement, tables: ServerTables, wanted: list[str], pool: int) -> None:
    """The store's statistics and FTS5's BM25 (what the local index asks FTS5 for), divided by the best."""
    statement.add(_STATISTICS.format(memories=tables.index))
    statement.add(
        f"hits AS MATERIALIZED (SELECT t.memory_id, t.term, t.tf FROM {tables.terms} t "
        "WHERE t.term = ANY(%s))",
        wanted,
    )
    statement.add(
        "weights AS (SELECT term, ln(((SELECT n FROM stats) - count(*) + 0.5) / (count(*) + 0.5)) AS raw "
        f"FROM hits GROUP BY term), floored AS (SELECT term, CASE WHEN raw > 0 THEN raw "
        f"ELSE {FTS5_IDF_FLOOR} END AS idf FROM weights)"
    )
    statement.add(
        f"raw_lexical AS (SELECT s.id, s.key, sum({_term_score('w.idf', 's.length')}) AS score "
        "FROM hits h JOIN scope s ON s.id = h.memory_id JOIN floored w USING (term) "
        "GROUP BY s.id, s.key, s.length ORDER BY score DESC, s.key LIMIT %s)",
        pool,
    )
    statement.add(
        "lexical AS (SELECT id, key, score / (SELECT CASE WHEN max(score) > 0 THEN max(score) ELSE 1 END "
        "FROM raw_lexical) AS score FROM raw_lexical)"
    )


def add_dense(statement: Statement, tables: ServerTables, vector: Any, pool: int) -> None:
    """``dense``: exact cosine of the ``pool`` memories of ``scope`` whose vectors are most like
    ``vector`` (``add_scope`` first)."""
    statement.add("query_vector AS (SELECT %s::vector AS v)", vector_text(vector))
    statement.add(
        f"dense AS (SELECT s.id, s.key, 1 - (x.vector <=> (SELECT v FROM query_vector)) AS score "
        f"FROM scope s JOIN {tables.vectors} x ON x.id = s.id ORDER BY score DESC, s.key LIMIT %s)",
        pool,
    )


def add_empty(statement: Statement, name: str) -> None:
    statement.add(
        f"{name} AS (SELECT NULL::text AS id, NULL::text AS key, NULL::float8 AS score WHERE false)"
    )


def add_named(statement: Statement, tables: ServerTables, names: QueryNames, pool: int) -> None:
    """``named``: exact cosine of the ``pool`` memories of ``scope`` that ``names`` names whose vectors
    are most like the query's (``add_dense`` first)."""
    condition, params = named_condition(names, tables.dialect)
    statement.add(
        f"named AS (SELECT m.id, m.key, 1 - (x.vector <=> (SELECT v FROM query_vector)) AS score "
        f"FROM scope m JOIN {tables.vectors} x ON x.id = m.id WHERE {condition} "
        "ORDER BY score DESC, m.key LIMIT %s)",
        *params,
        pool,
    )


RANKINGS = ("dense", "lexical", "named")


def add_fusion(statement: Statement) -> None:
    """``fused``: each memory's reciprocal-rank score, ``1 / (RRF_K + position)`` in each ranking that
    holds it (positions from 0 in score then key order), added in the order ``retrieve.ranking`` adds
    them: the same floating-point sums as the local index; with its place in the lexical ranking
    (``place``), which orders equal scores."""
    for name in RANKINGS:
        statement.add(
            f"{name}_ranked AS (SELECT id, key, row_number() OVER (ORDER BY score DESC, key) - 1 AS place "
            f"FROM {name})"
        )
    score = " + ".join(f"coalesce(1::float8 / ({RRF_K} + {r}.place), 0)" for r in ("d", "l", "n"))
    statement.add(
        f"fused AS (SELECT coalesce(d.id, l.id, n.id) AS id, coalesce(d.key, l.key, n.key) AS key, "
        f"{score} AS score, l.place AS place "
        "FROM dense_ranked d FULL JOIN lexical_ranked l ON l.id = d.id "
        "FULL JOIN named_ranked n ON n.id = coalesce(d.id, l.id))"
    )


def add_alone(statement: Statement, name: str) -> None:
    """``fused``: one ranking alone, with its own scores."""
    statement.add(f"fused AS (SELECT id, key, score, NULL::bigint AS place FROM {name})")


def ranking_statement(
    tables: ServerTables, query: str, vector: Any, pool: int, scope: SearchFilter, method: Method
) -> Statement:
    """The common table expressions up to ``fused``: the rankings ``method`` asks for (the dense,
    lexical and named ones, fused, for ``hybrid``), each of its ``pool`` best inside ``scope``."""
    statement, wanted, names = Statement(), query_terms(query), query_names(query)
    add_scope(statement, tables, scope, time.time())
    if method != "lexical" and vector is not None:
        add_dense(statement, tables, vector, pool)
    else:
        add_empty(statement, "dense")
    if method != "dense" and wanted:
        add_lexical(statement, tables, scope, wanted, pool)
    else:
        add_empty(statement, "lexical")
    if method == "hybrid" and names and vector is not None:
        add_named(statement, tables, names, pool)
    else:
        add_empty(statement, "named")
    if method == "hybrid":
        add_fusion(statement)
    else:
        add_alone(statement, method)
    return statement

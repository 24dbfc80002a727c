"""The index's ranking as PostgreSQL: the same BM25 (the scope's own statistics; the store's, scored as
FTS5 scores, for a search of the whole store), exact cosine over the vectors, similarity among the
memories the query names, the reciprocal rank fusion of the three and the key order of equal scores
that the local index computes, in one statement, with the scope and turn-aware visibility inside each
ranking.

Each part is a common table expression: ``lexical(id, key, score)``, ``dense(id, key, score)`` and
``named(id, key, score)`` are what the local index's ``lexical`` and ``dense`` return (equal scores
in the keys' byte order, as SQLite orders them, whatever the database's collation),
``fused(id, key, score)`` what its ``ranked`` returns. The constants are the ones ``index.bm25`` and
``retrieve.ranking`` use, and each memory's BM25 terms are added in the query's term order, as the
local index adds them, so equal memories score the same to the last bit whatever plan the server picks.

What a ranking reads, per memory of the scope, is one row: a search restricted to sessions, agents or
a viewer finds its memories from their sources, reads each one's row once (key, length, vector; the
similarity is computed there) into ``scope``; a search of the whole store reads the index table in one
pass for the dense ranking and the rows of the memories holding a query term for the lexical one, with
the store's statistics kept as memories come and go (``reshape``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames, named_condition, query_names
from massgen_cli.memory.longterm.retrieve.ranking import RRF_K, WEIGHTS, Method
from massgen_cli.memory.longterm.store.index.bm25 import K1, B
from massgen_cli.memory.longterm.store.index.terms import query_terms
from massgen_cli.memory.longterm.store.server.tables import ServerTables
from massgen_cli.memory.longterm.store.vectors import vector_text

FTS5_IDF_FLOOR = 1e-6
"""FTS5 scores a term found in most memories 1e-6 rather than a negative weight."""
_SIMILARITY = "1 - (m.vector <=> (SELECT v FROM query_vector))"


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


@dataclass(frozen=True)
class Memories:
    """Where the rankings read the memories of the search's scope: ``FROM {source} WHERE {condition}``,
    each ``m`` with ``id``, ``key``, ``length`` and its similarity to the query (``similarity``,
    NULL for a memory without a vector)."""

    source: str
    condition: str
    params: tuple[Any, ...]
    similarity: str
    has_vector: str
    scoped: bool
    """Whether they are the ``scope`` table expression (a scope restricted by sources)."""


def add_memories(statement: Statement, tables: ServerTables, scope: SearchFilter, vector: Any) -> Memories:
    """``query_vector`` (given a vector) and, for a scope restricted by sources, ``scope``: its
    memories found from their sources, each row read once (``LATERAL ... OFFSET 0`` keeps the server
    from scanning the whole table to join them)."""
    if vector is not None:
        statement.add("query_vector AS (SELECT %s::vector AS v)", vector_text(vector))
    own, params = scope.own_condition(time.time(), tables.dialect)
    if not scope.restricts_sources:
        return Memories(f"{tables.index} m", own, tuple(params), _SIMILARITY, "m.vector IS NOT NULL", False)
    sources, source_params = scope.counted_sources(tables.dialect)
    similarity = _SIMILARITY if vector is not None else "NULL::float8"
    statement.add(
        f"scope AS MATERIALIZED (SELECT m.id, m.key, m.length, {similarity} AS similarity "
        f"FROM (SELECT DISTINCT memory_id FROM ({sources}) s) found CROSS JOIN LATERAL "
        f"(SELECT m.id, m.key, m.length, m.vector FROM {tables.index} m "
        f"WHERE m.id = found.memory_id AND {own} OFFSET 0) m)",
        *source_params,
        *params,
    )
    return Memories("scope m", "true", (), "m.similarity", "m.similarity IS NOT NULL", True)


def _length_norm(length: str) -> str:
    return (
        f"{K1} * (1 - {B} + {B} * {length} / (SELECT CASE WHEN avgdl > 0 THEN avgdl ELSE 1 END FROM stats))"
    )


def _in_query_order(term_score: str) -> str:
    """The sum of a memory's ``term_score`` (on ``w``, the query term's weight and ``place``, and ``h``,
    its count) over the query terms it holds, added in the query's order, in a grouping by memory."""
    return f"sum({term_score} ORDER BY w.place)"


def add_lexical(
    statement: Statement, tables: ServerTables, memories: Memories, wanted: list[str], pool: int
) -> None:
    """``lexical``: BM25 of the ``pool`` memories best matching the query terms ``wanted``."""
    if memories.scoped:
        _scoped_lexical(statement, tables, wanted, pool)
    else:
        _store_wide_lexical(statement, tables, memories, wanted, pool)


def _scoped_lexical(statement: Statement, tables: ServerTables, wanted: list[str], pool: int) -> None:
    """The scope's own statistics (how many of its memories hold each term, their average length);
    scores divided by the sum of the query terms' weights."""
    statement.add(
        "stats AS (SELECT count(*)::float8 AS n, "
        "coalesce(sum(length)::float8 / nullif(count(*), 0), 0) AS avgdl FROM scope)"
    )
    statement.add(
        f"hits AS MATERIALIZED (SELECT t.memory_id, t.term, t.tf FROM {tables.terms} t "
        "JOIN scope s ON s.id = t.memory_id WHERE t.term = ANY(%s))",
        wanted,
    )
    statement.add(
        "weights AS (SELECT q.term, q.place, ln(1 + ((SELECT n FROM stats) - coalesce(c.holding, 0) + 0.5) "
        "/ (coalesce(c.holding, 0) + 0.5)) AS idf FROM unnest(%s::text[]) WITH ORDINALITY AS q(term, place) "
        "LEFT JOIN (SELECT term, count(*)::float8 AS holding FROM hits GROUP BY term) c USING (term))",
        wanted,
    )
    term_score = f"w.idf * h.tf * {K1 + 1} / (h.tf + {_length_norm('s.length')})"
    statement.add(
        f"lexical AS (SELECT s.id, s.key, {_in_query_order(term_score)} "
        "/ (SELECT CASE WHEN sum(idf) > 0 THEN sum(idf ORDER BY place) ELSE 1 END FROM weights) AS score "
        "FROM hits h JOIN scope s ON s.id = h.memory_id JOIN weights w USING (term) "
        'GROUP BY s.id, s.key, s.length ORDER BY score DESC, s.key COLLATE "C" LIMIT %s)',
        pool,
    )


def _store_wide_lexical(
    statement: Statement, tables: ServerTables, memories: Memories, wanted: list[str], pool: int
) -> None:
    """The store's statistics and FTS5's BM25 (what the local index asks FTS5 for: each term's score
    ``idf * (tf * (k1 + 1)) / (tf + k1 * (...))``, in FTS5's order of operations), divided by the best."""
    statement.add(
        "stats AS (SELECT coalesce(sum(memories), 0)::float8 AS n, coalesce(sum(length)::float8 "
        f"/ nullif(sum(memories), 0)::float8, 0) AS avgdl FROM {tables.statistics})"
    )
    statement.add(
        f"hits AS MATERIALIZED (SELECT t.memory_id, t.term, t.tf FROM {tables.terms} t "
        "WHERE t.term = ANY(%s))",
        wanted,
    )
    statement.add(
        "weights AS (SELECT term, ln(((SELECT n FROM stats) - count(*) + 0.5) / (count(*) + 0.5)) AS raw "
        "FROM hits GROUP BY term), floored AS (SELECT w.term, q.place, CASE WHEN w.raw > 0 THEN w.raw "
        f"ELSE {FTS5_IDF_FLOOR} END AS idf FROM weights w "
        "JOIN unnest(%s::text[]) WITH ORDINALITY AS q(term, place) USING (term))",
        wanted,
    )
    statement.add(
        "holding AS MATERIALIZED (SELECT m.id, m.key, m.length FROM "
        f"(SELECT DISTINCT memory_id FROM hits) found JOIN {memories.source} ON m.id = found.memory_id "
        f"WHERE {memories.condition})",
        *memories.params,
    )
    term_score = f"w.idf * (h.tf * {K1 + 1}) / (h.tf + {_length_norm('m.length')})"
    statement.add(
        f"raw_lexical AS (SELECT m.id, m.key, {_in_query_order(term_score)} AS score "
        "FROM hits h JOIN holding m ON m.id = h.memory_id JOIN floored w USING (term) "
        'GROUP BY m.id, m.key, m.length ORDER BY score DESC, m.key COLLATE "C" LIMIT %s)',
        pool,
    )
    statement.add(
        "lexical AS (SELECT id, key, score / (SELECT CASE WHEN max(score) > 0 THEN max(score) ELSE 1 END "
        "FROM raw_lexical) AS score FROM raw_lexical)"
    )


def add_dense(
    statement: Statement,
    memories: Memories,
    pool: int,
    name: str = "dense",
    also: tuple[str, list[Any]] = ("true", []),
) -> None:
    """``dense`` (or ``name``): exact cosine of the ``pool`` memories most like the query vector (among
    those ``also``, a condition and its parameters, holds for)."""
    condition, params = also
    statement.add(
        f"{name} AS (SELECT m.id, m.key, {memories.similarity} AS score FROM {memories.source} "
        f"WHERE {memories.condition} AND {memories.has_vector} AND {condition} "
        'ORDER BY score DESC, m.key COLLATE "C" LIMIT %s)',
        *memories.params,
        *params,
        pool,
    )


def add_named(
    statement: Statement, tables: ServerTables, memories: Memories, names: QueryNames, pool: int
) -> None:
    """``named``: exact cosine of the ``pool`` memories that ``names`` names most like the query."""
    add_dense(statement, memories, pool, "named", named_condition(names, tables.dialect))


def add_empty(statement: Statement, name: str) -> None:
    statement.add(
        f"{name} AS (SELECT NULL::text AS id, NULL::text AS key, NULL::float8 AS score WHERE false)"
    )


RANKINGS = ("dense", "lexical", "named")


def add_fusion(statement: Statement) -> None:
    """``fused``: each memory's reciprocal-rank score, ``weight / (RRF_K + position)`` in each ranking
    that holds it (positions from 0 in score then key order), added in the order ``retrieve.ranking`` adds
    them: the same floating-point sums as the local index; with its place in the lexical ranking
    (``place``), which orders equal scores."""
    for name in RANKINGS:
        statement.add(
            f"{name}_ranked AS (SELECT id, key, row_number() OVER "
            f'(ORDER BY score DESC, key COLLATE "C") - 1 AS place FROM {name})'
        )
    score = " + ".join(
        f"coalesce({weight}::float8 / ({RRF_K} + {r}.place), 0)"
        for r, weight in zip(("d", "l", "n"), WEIGHTS, strict=True)
    )
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
    dense = method != "lexical" and vector is not None
    memories = add_memories(statement, tables, scope, vector if dense else None)
    if dense:
        add_dense(statement, memories, pool)
    else:
        add_empty(statement, "dense")
    if method != "dense" and wanted:
        add_lexical(statement, tables, memories, wanted, pool)
    else:
        add_empty(statement, "lexical")
    if method == "hybrid" and names and dense:
        add_named(statement, tables, memories, names, pool)
    else:
        add_empty(statement, "named")
    if method == "hybrid":
        add_fusion(statement)
    else:
        add_alone(statement, method)
    return statement

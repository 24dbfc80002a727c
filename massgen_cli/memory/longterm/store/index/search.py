"""The index's rankings, with the search's filter inside each: BM25 over the memories the filter allows
(FTS5 finds them, the scores use that scope's own statistics), exact similarity over their vectors
(kept in memory as one matrix, brought up to date with the file before each search), and similarity
among the memories the query names; and the source each hit is shown as."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.context import nearest
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames, named_condition, query_names
from massgen_cli.memory.longterm.retrieve.ranking import Method, reciprocal_rank_fusion
from massgen_cli.memory.longterm.retrieve.sql import SQLITE
from massgen_cli.memory.longterm.store.index.bm25 import ScopeStatistics, bm25
from massgen_cli.memory.longterm.store.index.context import (
    position_params,
    side_params,
    side_query,
    source_position,
)
from massgen_cli.memory.longterm.store.index.kept_vectors import (
    KEEP_AFTER_ROWS,
    KeptVectors,
    kept_path,
    read_kept,
    write_kept,
)
from massgen_cli.memory.longterm.store.index.records import SOURCE_COLUMNS, source_of
from massgen_cli.memory.longterm.store.index.schema import IndexFile, placeholders, vector_blob
from massgen_cli.memory.longterm.store.index.terms import fts_query, query_terms

CANDIDATES = 20_000
"""The most memories of a scope that hold a query's terms scored at once (FTS5's order picks them when
there are more; below it, the scores are exact for the scope)."""


class IndexSearch(IndexFile):
    """Lexical and dense rankings under a filter, the vectors they use, and attribution."""

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, method: Method
    ) -> list[tuple[str, float]]:
        """``(id, score)`` inside ``scope``, best first (equal scores in key order): for ``hybrid`` the
        ``pool`` best of the dense, lexical and named rankings, fused by reciprocal rank; for
        ``dense`` or ``lexical`` that ranking alone, with its own scores."""
        dense = self.dense(vector, pool, scope) if method != "lexical" and vector is not None else []
        lexical = self.lexical(query, pool, scope) if method != "dense" else []
        if method != "hybrid":
            return (dense or lexical)[:pool]
        names = query_names(query)
        named = self.dense(vector, pool, scope, names) if names and vector is not None else []
        keys = self.keys(memory_id for ranking in (dense, lexical, named) for memory_id, _ in ranking)
        return reciprocal_rank_fusion(dense, lexical, named, keys)

    def lexical(self, query: str, limit: int, scope: SearchFilter | None = None) -> list[tuple[str, float]]:
        """``(id, BM25 score)`` of the memories ``scope`` allows that best match ``query``'s terms, best
        first. The statistics (how many memories of the scope hold each term, their average length)
        are the scope's, so other sessions' memories change neither scores nor order. A search of the
        whole store takes FTS5's own ``bm25()``, whose statistics are the store's (scores divided by the
        best), rather than score every memory that holds a word."""
        wanted = query_terms(query)
        if not wanted:
            return []
        scope = scope or SearchFilter()
        condition, params = scope.memory_condition()
        arguments = [fts_query(wanted), *params]
        joined = (
            f"FROM memories_fts f JOIN memories m ON m.id = f.id WHERE memories_fts MATCH ? AND {condition}"
        )
        if not scope.restricts_sources:
            return self._store_wide(joined, arguments, limit)
        with self._lock:
            every = f"SELECT m.key, f.id, f.body {joined} LIMIT ?"
            found = self._db.execute(every, [*arguments, CANDIDATES + 1]).fetchall()
            if len(found) > CANDIDATES:  # more than are scored: FTS5's order picks them
                ordered = f"SELECT m.key, f.id, f.body {joined} ORDER BY bm25(memories_fts) LIMIT ?"
                found = self._db.execute(ordered, [*arguments, CANDIDATES]).fetchall()
            statistics_sql = f"SELECT COUNT(*), AVG(m.length) FROM memories m WHERE {condition}"
            documents, average = self._db.execute(statistics_sql, params).fetchone()
        by_key = {key: (memory_id, body.split()) for key, memory_id, body in found}
        statistics = ScopeStatistics(int(documents or 0), float(average or 0.0))
        ranked = bm25([(key, body) for key, (_, body) in by_key.items()], wanted, statistics)
        return [(by_key[key][0], score) for key, score in ranked[:limit]]

    def _store_wide(self, joined: str, arguments: list[Any], limit: int) -> list[tuple[str, float]]:
        """FTS5's own ranking (its statistics are the store's), scores divided by the best; equal scores
        in key order, so the same memories make the cut in every index."""
        sql = f"SELECT f.id, -bm25(memories_fts) {joined} ORDER BY bm25(memories_fts), m.key LIMIT ?"
        with self._lock:
            found = self._db.execute(sql, [*arguments, limit]).fetchall()
        best = found[0][1] if found and found[0][1] > 0 else 1.0
        return [(memory_id, score / best) for memory_id, score in found]

    def dense(
        self,
        query_vector: Any,
        limit: int,
        scope: SearchFilter | None = None,
        names: QueryNames | None = None,
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the memories ``scope`` allows (and ``names`` names, when given) whose
        vectors are most like ``query_vector``, best first."""
        condition, params = (scope or SearchFilter()).memory_condition()
        if names is not None:
            named, more = named_condition(names)
            condition, params = f"{condition} AND {named}", [*params, *more]
        with self._lock:
            self._stacked_vectors()
            allowed = [
                row[0]
                for row in self._db.execute(f"SELECT m.rowid FROM memories m WHERE {condition}", params)
            ]
            top = self.vectors.top(query_vector, allowed, limit)  # agents search from several threads
        return self.ties_by_key(top)[:limit]

    def neighbours(
        self, memory_id: str, source: Source, count: int, scope: SearchFilter
    ) -> list[tuple[int, str, Source]]:
        """``(offset, memory id, source)`` of the memories recorded just before and after ``source`` of
        ``memory_id`` in its session (``retrieve.context``), up to ``count`` on each side."""
        with self._lock:
            found = self._db.execute(
                source_position(SQLITE, "rowid"), position_params(memory_id, source)
            ).fetchone()
            if found is None:
                return []
            sides = []
            for after in (False, True):
                sql, params = side_query(scope, SQLITE, "memories", "rowid", after=after)
                rows = self._db.execute(sql, side_params(memory_id, source, found[0], params, count))
                sides.append([(row[0], source_of(row)) for row in rows.fetchall()])
        return nearest(memory_id, sides[0], sides[1], count)

    def keys(self, ids: Iterable[str]) -> dict[str, str]:
        """The key of each memory (what orders equal scores the same in every store)."""
        wanted, marks = placeholders(ids)
        if not wanted:
            return {}
        with self._lock:
            return dict(self._db.execute(f"SELECT id, key FROM memories WHERE id IN ({marks})", wanted))

    def ties_by_key(self, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """Equal scores in the order of the memories' keys, which depend on content alone (ids are drawn
        at random): a tie, such as the same words said on two days, falls the same way in every store."""
        keys = self.keys(memory_id for memory_id, _ in ranked)
        return sorted(ranked, key=lambda pair: (-pair[1], keys.get(pair[0], "")))

    def warm(self) -> None:
        with self._lock:
            self._stacked_vectors()

    def _stacked_vectors(self) -> None:
        """The in-memory vectors up to date with the file (another process may have written), starting
        from the copy kept beside it in a new process, and a new copy kept once enough rows were read
        past it (``kept_vectors``)."""
        generation = self._generation()
        if generation != self.vectors.generation:
            self.vectors.reset(generation)
            self._kept_rows = self._start_from_kept(generation)
        rows = self._db.execute(
            "SELECT rowid, id, vector FROM memories WHERE rowid > ? AND vector IS NOT NULL ORDER BY rowid",
            (self.vectors.last_rowid,),
        )
        self.vectors.extend(rows)
        self.vectors.stack()
        if self.path is not None and len(self.vectors.ids) - self._kept_rows >= KEEP_AFTER_ROWS:
            write_kept(self.path, KeptVectors(self._identity(generation), *self.vectors.rows()))
            self._kept_rows = len(self.vectors.ids)
            if self._generation() != generation:  # memories deleted meanwhile: not left in a copy
                kept_path(self.path).unlink(missing_ok=True)

    def _generation(self) -> str:
        found = self._db.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        return found[0] if found else "0"

    def _start_from_kept(self, generation: str) -> int:
        """Adopt the kept copy when it is this index's at this generation and its last row is still
        here; how many rows it gave."""
        kept = read_kept(self.path, self._identity(generation)) if self.path is not None else None
        if kept is None or not kept.ids:
            return 0
        last = self._db.execute("SELECT id FROM memories WHERE rowid = ?", (int(kept.rowids[-1]),)).fetchone()
        if last is None or last[0] != kept.ids[-1]:
            return 0
        self.vectors.adopt(kept.rowids, kept.ids, kept.matrix)
        return len(kept.ids)

    def _identity(self, generation: str) -> str:
        return f"{self.meta('index_id')}:{generation}"

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        """``(id, indexed text)`` of memories without a vector (stored before the index kept vectors, or
        whose indexed text changed form)."""
        with self._lock:
            return self._db.execute(
                "SELECT id, text FROM memories WHERE vector IS NULL LIMIT ?", (limit,)
            ).fetchall()

    def set_vectors(self, vectors: dict[str, Any]) -> None:
        with self._lock:
            self._db.executemany(
                "UPDATE memories SET vector = ? WHERE id = ?",
                [(vector_blob(v), i) for i, v in vectors.items()],
            )
            self._bump_generation()

    def attribute(self, ids: Iterable[str], scope: SearchFilter | None = None) -> dict[str, Source]:
        """For each memory, the earliest source that ``scope`` counts (the one a hit is shown as)."""
        wanted, marks = placeholders(ids)
        if not wanted:
            return {}
        scope = scope or SearchFilter()
        condition, params = scope.source_condition()
        columns = ", ".join(f"s.{column.strip()}" for column in SOURCE_COLUMNS.split(","))
        sql = (
            f"SELECT {columns} FROM sources s {scope.join()} "
            f"WHERE s.memory_id IN ({marks}) AND {condition} ORDER BY s.rowid"
        )
        found: dict[str, Source] = {}
        with self._lock:
            for row in self._db.execute(sql, [*wanted, *params]):
                if row[0] not in found:
                    found[row[0]] = source_of(row)
        return found

"""Both rankings of the index, with the search's filter inside each: BM25 over FTS5 with the filter in
the same query, and exact similarity over the vectors of the memories the filter allows (kept in memory
as one matrix, brought up to date with the file before each search); and the source each hit is shown
as."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.schema import IndexFile, placeholders, vector_blob

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has",
        "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our",
        "she", "so", "that", "the", "their", "them", "they", "this", "to", "was", "we", "were", "what",
        "when", "where", "which", "who", "why", "will", "with", "you", "your",
    )
)


def fts_query(text: str) -> str:
    """An FTS5 query that matches any of the text's words (quoted, so no word is read as an operator)."""
    words = dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)
    return " OR ".join(f'"{word}"' for word in words)


class IndexSearch(IndexFile):
    """Lexical and dense rankings under a filter, the vectors they use, and attribution."""

    def lexical(self, query: str, limit: int, scope: SearchFilter | None = None) -> list[tuple[str, float]]:
        """``(id, BM25 score)`` of the memories ``scope`` allows that best match ``query``'s words, best
        first (FTS5's ``bm25`` is negated so that higher is better)."""
        terms = fts_query(query)
        if not terms:
            return []
        condition, params = (scope or SearchFilter()).memory_condition()
        sql = (
            "SELECT f.id, -bm25(memories_fts) FROM memories_fts f JOIN memories m ON m.id = f.id "
            f"WHERE memories_fts MATCH ? AND {condition} ORDER BY bm25(memories_fts) LIMIT ?"
        )
        with self._lock:
            return [(row[0], row[1]) for row in self._db.execute(sql, [terms, *params, limit])]

    def dense(
        self, query_vector: Any, limit: int, scope: SearchFilter | None = None
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the memories ``scope`` allows whose vectors are most like ``query_vector``,
        best first."""
        condition, params = (scope or SearchFilter()).memory_condition()
        with self._lock:
            self._sync_vectors()
            allowed = [
                row[0]
                for row in self._db.execute(f"SELECT m.rowid FROM memories m WHERE {condition}", params)
            ]
            return self.vectors.top(query_vector, allowed, limit)  # agents search from several threads

    def _sync_vectors(self) -> None:
        """Bring the in-memory vectors up to date with the file (another process may have written)."""
        generation = self._db.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        generation = generation[0] if generation else "0"
        if generation != self.vectors.generation:
            self.vectors.reset(generation)
        rows = self._db.execute(
            "SELECT rowid, id, vector FROM memories WHERE rowid > ? AND vector IS NOT NULL ORDER BY rowid",
            (self.vectors.last_rowid,),
        )
        self.vectors.extend(rows)

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        """``(id, indexed text)`` of memories stored before the index kept vectors."""
        with self._lock:
            ids = [
                row[0]
                for row in self._db.execute("SELECT id FROM memories WHERE vector IS NULL LIMIT ?", (limit,))
            ]
            if not ids:
                return []
            _, marks = placeholders(ids)
            return self._db.execute(
                f"SELECT id, body FROM memories_fts WHERE id IN ({marks})", ids
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
        sql = (
            f"SELECT s.memory_id, s.agent_id, s.session_id, s.turn, s.attempt FROM sources s {scope.join()} "
            f"WHERE s.memory_id IN ({marks}) AND {condition} ORDER BY s.rowid"
        )
        found: dict[str, Source] = {}
        with self._lock:
            for memory_id, agent_id, session_id, turn, attempt in self._db.execute(sql, [*wanted, *params]):
                found.setdefault(memory_id, Source(agent_id, session_id, turn, attempt))
        return found

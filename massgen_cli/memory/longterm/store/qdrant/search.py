"""Searching the Qdrant index through its Query API: a dense, a sparse and a named ranking (dense among
the memories of the speakers the query names), each under the search's filter, asked in one batch
request and fused here by the other indexes' fusion (``retrieve.ranking``: the server's weighted
fusion stretches each rank by its weight rather than weighing its score); and the source each hit is
shown as.

Qdrant cannot compute the other indexes' lexical ranking (BM25 with the scope's own statistics): its
sparse scores take their IDF from the whole collection and the length of each memory against a fixed
reference. The fusion is the same, so where the two lexical rankings agree the fused ones do. The
conformance test measures how far the top 10 agree with the local index's, and holds membership,
attribution, values, marks, listing and clearing to exact equality."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.context import SPREAD, context_scope, memory_scope, nearest
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames, query_names
from massgen_cli.memory.longterm.retrieve.ranking import Method, reciprocal_rank_fusion
from massgen_cli.memory.longterm.store.index.terms import query_terms
from massgen_cli.memory.longterm.store.qdrant.filters import (
    counts,
    equals,
    memory_filter,
    named_filter,
    one_of,
    records_of,
)
from massgen_cli.memory.longterm.store.qdrant.points import (
    DENSE,
    TERMS,
    point_id,
    query_terms_vector,
    source_of,
)
from massgen_cli.memory.longterm.store.qdrant.records import VECTORS_MISSING, QdrantRecords
from massgen_cli.memory.longterm.store.qdrant.sources import won


class QdrantSearch(QdrantRecords):
    """Rankings computed by the server, under the search's filter."""

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, method: Method
    ) -> list[tuple[str, float]]:
        """As ``Ranking.ranked`` says; the rankings ``method`` asks for (for ``hybrid`` the dense, sparse
        and named ones) are asked in one request and fused here as the other indexes fuse theirs."""

        requests = self._requests(query, vector, pool, memory_filter(scope, time.time()), method)
        if not requests:
            return []
        answers = self.client.query_batch_points(self.memories, list(requests.values()))
        rankings = {
            role: _in_key_order(answer.points) for role, answer in zip(requests, answers, strict=True)
        }
        if method != "hybrid":
            return next(iter(rankings.values()))
        keys = {point.payload["memory_id"]: point.payload["key"] for a in answers for point in a.points}
        return reciprocal_rank_fusion(
            rankings.get("dense", []), rankings.get("lexical", []), rankings.get("named", []), keys
        )

    def _requests(
        self, query: str, vector: Sequence[float] | None, pool: int, where: Any, method: Method
    ) -> dict[str, Any]:
        """The rankings ``method`` asks for, by role, each of the ``pool`` best under ``where``: dense,
        lexical (sparse), and for ``hybrid`` dense among the memories of the speakers the query names."""
        from qdrant_client import models

        wanted, names = query_terms(query), query_names(query)
        dense = [float(value) for value in vector] if vector is not None else None
        fields = ["memory_id", "key"]
        requests = {}
        if method != "lexical" and dense is not None:
            requests["dense"] = models.QueryRequest(
                query=dense, using=DENSE, filter=where, limit=pool, with_payload=fields
            )
        if method != "dense" and wanted:
            requests["lexical"] = models.QueryRequest(
                query=query_terms_vector(wanted), using=TERMS, filter=where, limit=pool, with_payload=fields
            )
        if method == "hybrid" and names and dense is not None:
            named = models.Filter(must=[where, named_filter(names)])
            requests["named"] = models.QueryRequest(
                query=dense, using=DENSE, filter=named, limit=pool, with_payload=fields
            )
        return requests

    def speakers(self, names: QueryNames) -> frozenset[str]:
        """Those of ``names``' speakers that some memory point is said by (a facet of the indexed
        ``speaker`` field)."""
        if not names:
            return frozenset()
        found = self.client.facet(
            self.memories, "speaker", facet_filter=named_filter(names), limit=len(names.speakers), exact=True
        )
        return frozenset(str(hit.value) for hit in found.hits)

    def neighbours(
        self, memory_id: str, source: Source, count: int, scope: SearchFilter
    ) -> list[tuple[int, str, Source]]:
        """``(offset, memory id, source)`` of the memories recorded just before and after ``source`` of
        ``memory_id`` in its session (``retrieve.context``), up to ``count`` on each side: source
        points in ``recorded_at`` order, read until ``SPREAD`` per neighbour wanted pass the scope, as
        the other indexes read them. Five requests in all, unless too few of the first pages pass."""
        identity = point_id(
            "source", memory_id, source.agent_id, source.session_id, source.turn, source.attempt
        )
        found = self.client.retrieve(self.records, [identity], with_payload=["recorded_at"])
        if not found:
            return []
        at, wanted = str(found[0].payload["recorded_at"]), count * SPREAD
        pages = [self._page(memory_id, source.session_id, at, wanted, after=after) for after in (False, True)]
        before, after = (
            self._rest(memory_id, source.session_id, page, kept, wanted, scope, after=side)
            for page, kept, side in zip(pages, self._admitted(pages, scope), (False, True), strict=True)
        )
        return nearest(memory_id, before, after, count)

    def _page(self, memory_id: str, session_id: str, at: str, wanted: int, *, after: bool) -> list[Any]:
        """Up to ``wanted`` source points of the session on one side of ``at``, nearest first, without
        ``memory_id``'s (their payloads)."""
        from qdrant_client import models

        moment = models.DatetimeRange.model_validate({"gt" if after else "lt": at})
        where = records_of("source", equals("session_id", session_id))
        where.must += [models.FieldCondition(key="recorded_at", range=moment)]
        where.must_not = [equals("memory_id", memory_id)]
        direction = models.Direction.ASC if after else models.Direction.DESC
        order = models.OrderBy(key="recorded_at", direction=direction)
        points, _ = self.client.scroll(
            self.records, scroll_filter=where, limit=wanted, order_by=order, with_payload=True
        )
        return [point.payload for point in points]

    def _rest(
        self,
        memory_id: str,
        session_id: str,
        page: list[Any],
        kept: list[tuple[str, Source]],
        wanted: int,
        scope: SearchFilter,
        *,
        after: bool,
    ) -> list[tuple[str, Source]]:
        """One side's ``wanted`` nearest that ``scope`` lets a neighbour come from: ``kept`` (what passed
        of its first ``page``), and further pages while too few passed and the session has more."""
        while len(kept) < wanted and len(page) == wanted:
            page = self._page(memory_id, session_id, str(page[-1]["recorded_at"]), wanted, after=after)
            kept = kept + self._admitted([page], scope)[0]
        return kept[:wanted]

    def _admitted(
        self, pages: list[list[dict[str, Any]]], scope: SearchFilter
    ) -> list[list[tuple[str, Source]]]:
        """For each page, its source points (in their order) that ``scope`` lets a neighbour come from;
        the pages together in two requests (the winners of their turns, the memories still alive)."""
        entries = [entry for page in pages for entry in page]
        winners = self.winners((entry["session_id"], int(entry["turn"])) for entry in entries)
        seen = context_scope(scope)
        passed = [counts(seen, {**entry, "won": won(entry, winners)}) for entry in entries]
        visible = [entry["memory_id"] for entry, ok in zip(entries, passed, strict=True) if ok]
        alive = self._alive(visible, scope)
        flags = iter(passed)
        return [
            [(e["memory_id"], source_of(e)) for e in page if next(flags) and e["memory_id"] in alive]
            for page in pages
        ]

    def _alive(self, memory_ids: list[str], scope: SearchFilter) -> set[str]:
        """Those of ``memory_ids`` that the scope's memory filter admits now."""
        if not memory_ids:
            return set()
        where = memory_filter(memory_scope(scope), time.time())
        where.must.append(one_of("memory_id", memory_ids))
        return {point.payload["memory_id"] for point in self.every(self.memories, where, ["memory_id"])}

    def warm(self) -> None:
        """The server reads the vectors itself."""

    def without_vectors(self, limit: int) -> list[tuple[str, str]]:
        """``(id, text)`` of memories without a vector; only looked for while the index notes some."""
        from qdrant_client import models

        if self.meta(VECTORS_MISSING) is None:
            return []
        where = models.Filter(must_not=[models.HasVectorCondition(has_vector=DENSE)])
        points, _ = self.client.scroll(self.memories, scroll_filter=where, limit=limit, with_payload=True)
        if not points:
            self.client.delete(self.records, [point_id("meta", VECTORS_MISSING)], wait=True)
        return [(point.payload["memory_id"], point.payload["text"]) for point in points]

    def set_vectors(self, vectors: dict[str, Any]) -> None:
        from qdrant_client import models

        if not vectors:
            return
        where = models.Filter(must=[one_of("memory_id", list(vectors))])
        points = self.every(self.memories, where, ["memory_id"])
        updates = [
            models.PointVectors(
                id=point.id, vector={DENSE: [float(v) for v in vectors[point.payload["memory_id"]]]}
            )
            for point in points
        ]
        if updates:
            self.client.update_vectors(self.memories, updates, wait=True)

    def attribute(self, ids: Iterable[str], scope: SearchFilter | None = None) -> dict[str, Source]:
        """For each memory, the earliest source that ``scope`` counts (the one a hit is shown as)."""
        scope = scope or SearchFilter()
        found: dict[str, Source] = {}
        for memory_id, entries in self.copies(ids).items():
            shown = next((entry for entry in entries if counts(scope, entry)), None)
            if shown is not None:
                found[memory_id] = source_of(shown)
        return found


SAME_SCORE = 6
"""Decimal places within which two of the engine's scores are equal: it computes similarities in
float32, a row's last bits depending on where the row sits, so the same vector stored twice scores
1e-8 apart; the other indexes score it the same to the bit and order the two by key."""


def _in_key_order(points: Sequence[Any]) -> list[tuple[str, float]]:
    """``(memory id, score)`` of a ranking's points, best first, equal scores (``SAME_SCORE``) in key
    order."""
    ranked = sorted(points, key=lambda point: (-round(point.score, SAME_SCORE), point.payload["key"]))
    return [(point.payload["memory_id"], float(point.score)) for point in ranked]

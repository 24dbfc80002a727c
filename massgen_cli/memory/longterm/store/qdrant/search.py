"""Searching the Qdrant index through its Query API: a dense and a sparse prefetch, each under the
search's filter, fused by the server in one request; and the source each hit is shown as.

Qdrant cannot compute the other indexes' ranking (BM25 with the scope's own statistics, then a convex
fusion of min-max-scaled cosines and best-scaled BM25): its sparse scores take their IDF from the
whole collection, and it fuses by rank (RRF) or by distribution (DBSF). The conformance test measures
how far the top 10 agree with the local index's, and holds membership, attribution, values, marks,
listing and clearing to exact equality. ``FUSION`` was chosen by that measurement (see the README)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.terms import query_terms
from massgen_cli.memory.longterm.store.qdrant.filters import counts, memory_filter, one_of
from massgen_cli.memory.longterm.store.qdrant.points import (
    DENSE,
    TERMS,
    point_id,
    query_terms_vector,
    source_of,
)
from massgen_cli.memory.longterm.store.qdrant.records import VECTORS_MISSING, QdrantRecords

FUSION = "dbsf"
"""Server-side fusion of the two prefetches: ``rrf`` (reciprocal rank, k=2) or ``dbsf``."""


class QdrantSearch(QdrantRecords):
    """Rankings computed by the server, under the search's filter."""

    fusion = FUSION

    def ranked(
        self, query: str, vector: Sequence[float] | None, pool: int, scope: SearchFilter, dense_weight: float
    ) -> list[tuple[str, float]]:
        """``(id, score)`` of the ``pool`` best of each ranking inside ``scope``, fused by the server,
        best first (equal scores in key order); ``dense_weight`` 1 ranks by vectors alone, 0 by terms
        alone, and anything between by both, fused with equal weight."""
        from qdrant_client import models

        where = memory_filter(scope, time.time())
        wanted = query_terms(query)
        prefetches = []
        if dense_weight > 0 and vector is not None:
            dense = [float(value) for value in vector]
            prefetches.append(models.Prefetch(query=dense, using=DENSE, filter=where, limit=pool))
        if dense_weight < 1 and wanted:
            sparse = query_terms_vector(wanted)
            prefetches.append(models.Prefetch(query=sparse, using=TERMS, filter=where, limit=pool))
        if not prefetches:
            return []
        if len(prefetches) == 1:
            [only] = prefetches
            found = self.client.query_points(
                self.memories,
                query=only.query,
                using=only.using,
                query_filter=where,
                limit=pool,
                with_payload=["memory_id", "key"],
            )
        else:
            fusion = models.Fusion.DBSF if self.fusion == "dbsf" else models.Fusion.RRF
            found = self.client.query_points(
                self.memories,
                prefetch=prefetches,
                query=models.FusionQuery(fusion=fusion),
                limit=2 * pool,
                with_payload=["memory_id", "key"],
            )
        ranked = sorted(found.points, key=lambda point: (-point.score, point.payload["key"]))
        return [(point.payload["memory_id"], float(point.score)) for point in ranked]

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

"""Rank fusion: a convex combination of the two rankings' normalised scores, over candidate pools whose
size never depends on how many results were asked for (pure functions).

Each ranking is a best-first list of ``(id, score)`` with higher scores better. Cosine similarity is
scaled to [0, 1] between the lowest and highest score of its candidates; BM25 (never below 0) is divided
by its best score. An id missing from a ranking scores 0 there. Equal weights. Each ranking contributes
its ``POOL`` best, whatever the limit, so the extremes the scores are scaled between are the same for
``--limit 10`` and ``--limit 50`` (when the pool grew with the limit, the top 10 of ``--limit 10`` and
``--limit 100`` differed for almost every question). A limit above ``POOL`` is served in tiers
(``tiers``): the first ``POOL`` results come from the ``POOL``-sized fusion, the next ones from a
fusion with twice the pool, and so on, so every result keeps its place whatever the limit.

Kept after measuring the alternatives on development data only (benchmarks/long_dialogues.py seeds 100
to 109, where dense leads, and the synthetic facts set, seeds 7 and 11, where lexical leads), any@1,
@5 and @10 with a pool of 100: this fusion 0.600/0.800/0.855 on the dialogues and 0.625/1.000/1.000 on
the facts, at least as good as the better half at every k (dense 0.540/0.800/0.835 on the dialogues,
lexical 0.588/1.000/1.000 on the facts). Reciprocal rank fusion (k=5) lost on both at @1
(0.500 and 0.588); raw cosines and BM25 over the sum of the query terms' weights, mixed half and
half, lost on the facts (0.900 at @5); distribution-based scaling (as Qdrant's DBSF) lost on the facts
(0.887 at @5).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

Ranking = Sequence[tuple[str, float]]
Method = Literal["hybrid", "dense", "lexical"]

POOL = 100
"""How many candidates each ranking contributes to a fusion, whatever the limit."""
DENSE_WEIGHT = 0.5
"""The share of the dense ranking in the fused score; the lexical ranking has the rest."""


def scaled_between_extremes(ranking: Ranking) -> dict[str, float]:
    """Scores mapped to [0, 1] between the ranking's lowest and highest (all 1 when they are equal)."""
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, spread = min(scores), max(scores) - min(scores)
    return {item: (score - low) / spread if spread else 1.0 for item, score in ranking}


def scaled_by_best(ranking: Ranking) -> dict[str, float]:
    """Non-negative scores divided by the best one (BM25 has a natural zero)."""
    best = max((score for _, score in ranking), default=0.0)
    return {item: max(score, 0.0) / best if best > 0 else 0.0 for item, score in ranking}


def convex_fusion(
    dense: Ranking, lexical: Ranking, dense_weight: float = DENSE_WEIGHT
) -> list[tuple[str, float]]:
    """Ids by ``w * dense + (1 - w) * lexical`` over normalised scores, best first (stable on ties)."""
    dense_scores, lexical_scores = scaled_between_extremes(dense), scaled_by_best(lexical)
    fused = {
        item: dense_weight * dense_scores.get(item, 0.0) + (1 - dense_weight) * lexical_scores.get(item, 0.0)
        for item in [*dense_scores, *lexical_scores]
    }
    return sorted(fused.items(), key=lambda pair: pair[1], reverse=True)


def tiers(limit: int) -> Iterator[int]:
    """The pool sizes that serve ``limit`` results: ``POOL``, then doubled until one reaches ``limit``.
    The results of one tier fill the places up to its pool size."""
    pool = POOL
    yield pool
    while pool < limit:
        pool *= 2
        yield pool

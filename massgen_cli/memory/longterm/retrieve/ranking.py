"""Rank fusion: a convex combination of the two rankings' normalised scores (pure functions).

Each ranking is a best-first list of ``(id, score)`` with higher scores better. Cosine similarity is
scaled to [0, 1] between the lowest and highest score of its candidates; BM25 (never below 0) is divided
by its best score. An id missing from a ranking scores 0 there. Equal weights.

Kept after measuring the alternatives on development data only (benchmarks/long_dialogues.py seeds 100
and up, where dense leads, and the synthetic facts set, where lexical leads): this fusion was at least
as good as the better half at any@1, @5 and @10 on both (dialogues 0.595/0.800/0.855 against dense's
0.545/0.800/0.835; facts 0.700/1.000/1.000 against lexical's 0.550/1.000/1.000). Distribution-based
scaling of the cosines (as Qdrant's DBSF) won on the dialogues (0.840 at @5) but lost to lexical on the
facts (0.825 against 1.000); reciprocal rank fusion (k=60) lost on the dialogues (0.600 at @5).
"""

from __future__ import annotations

from collections.abc import Sequence

Ranking = Sequence[tuple[str, float]]

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

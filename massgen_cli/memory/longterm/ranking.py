"""Rank fusion: reciprocal rank fusion of several best-first id lists (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60
"""The usual RRF constant: it damps the weight of the very first ranks."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Ids by the sum of 1 / (k + rank) over the rankings they appear in, best first (stable on ties)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)

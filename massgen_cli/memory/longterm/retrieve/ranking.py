"""Rank fusion: reciprocal rank fusion of the rankings of one search, over candidate pools whose size
never depends on how many results were asked for (pure functions).

A search ranks its scope three ways: by similarity (dense), by BM25 (lexical), and by similarity among
the memories the query names (``retrieve.names``: a named speaker's, or those mentioning a named
entity). Each ranking is a best-first list of ``(id, score)``, equal scores in key order; a memory
scores ``1 / (RRF_K + position)`` in each ranking that holds it (positions from 0, as Qdrant counts
them), summed in the order dense, lexical, named (so every index adds the same floating-point numbers
in the same order). A memory missing from a ranking scores nothing there. Equal fused scores go by the
lexical ranking (the memory holding more of the query's words first: the same words said by two
people are equally similar to any question, and only the words of who said them and when tell them
apart), then by key.

Each ranking contributes its ``POOL`` best, whatever the limit: the top 10 of ``--limit 10`` and
``--limit 50`` are the same list. A limit above ``POOL`` is served in tiers (``tiers``): the first
``POOL`` results come from the ``POOL``-sized fusion, the next ones from a fusion with twice the pool,
and so on, so every result keeps its place whatever the limit.

Chosen on development data only (benchmarks/long_dialogues.py seeds 100 to 109, where dense leads,
and the synthetic facts set, seeds 7 and 11, where lexical leads), before the reported conversations
were measured; any@1/@5/@10 with a pool of 100:

- this fusion (k=5, equal weights): 0.705/0.865/0.885 on the dialogues, 0.600/1.000/1.000 on the facts;
- the convex combination of min-max-scaled cosines and best-scaled BM25 used before, over the same
  pool: 0.600/0.800/0.855 and 0.625/1.000/1.000; with the named memories lifted by a fixed bonus
  instead of a ranking of their own: 0.650/0.810/0.865 and 0.662/1.000/1.000;
- reciprocal rank fusion of dense and lexical alone: 0.500/0.810/0.850 and 0.588/0.938/1.000;
- k from 3 to 8 and weights from 0.7 to 1.5 moved no figure by more than 0.02; k=60 lost
  (0.585/0.795/0.875 on the dialogues).

Unlike a fusion of scores, this one runs in Qdrant's Query API as it runs here (``Rrf(k)``; its
lexical scores differ from ours and it orders equal fused scores its own way, so its rankings agree
as measured rather than exactly).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

Ranking = Sequence[tuple[str, float]]
Method = Literal["hybrid", "dense", "lexical"]

RRF_K = 5
"""The rank constant: a memory at position p of a ranking scores ``1 / (RRF_K + p)`` there."""
POOL = 100
"""How many candidates each ranking contributes to a fusion, whatever the limit."""


def rrf_score(position: int) -> float:
    """What a memory at ``position`` (from 0) of one ranking adds to its fused score."""
    return 1.0 / (RRF_K + position)


def reciprocal_rank_fusion(
    dense: Ranking, lexical: Ranking, named: Ranking, keys: Mapping[str, str]
) -> list[tuple[str, float]]:
    """Ids by the sum of their ``rrf_score`` in each ranking, best first; equal sums by their place in
    ``lexical`` (missing: after all of it), then by their key (``keys``)."""
    fused: dict[str, float] = {}
    for ranking in (dense, lexical, named):
        for position, (item, _) in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + rrf_score(position)
    place = {item: position for position, (item, _) in enumerate(lexical)}
    return sorted(
        fused.items(), key=lambda pair: (-pair[1], place.get(pair[0], len(lexical)), keys.get(pair[0], ""))
    )


def tiers(limit: int) -> Iterator[int]:
    """The pool sizes that serve ``limit`` results: ``POOL``, then doubled until one reaches ``limit``.
    The results of one tier fill the places up to its pool size."""
    pool = POOL
    yield pool
    while pool < limit:
        pool *= 2
        yield pool

"""Rank fusion: weighted reciprocal rank fusion of the rankings of one search, over candidate pools
whose size never depends on how many results were asked for (pure functions).

A search ranks its scope three ways: by similarity (dense), by BM25 (lexical), and by similarity among
the memories of the speakers the query names (``retrieve.names``). Each ranking is a best-first list of
``(id, score)``, equal scores in key order; a memory scores ``weight / (RRF_K + position)`` in each
ranking that holds it (positions from 0), summed in the order dense, lexical, named (so every index
adds the same floating-point numbers in the same order). A memory missing from a ranking scores
nothing there. Equal fused scores go by the lexical ranking (the memory holding more of the query's
words first: the same words said by two people are equally similar to any question, and only the
words of who said them and when tell them apart), then by key.

Each ranking contributes its ``POOL`` best, whatever the limit: the top 10 of ``--limit 10`` and
``--limit 50`` are the same list. A limit above ``POOL`` is served in tiers (``tiers``): the first
``POOL`` results come from the ``POOL``-sized fusion, the next ones from a fusion with twice the pool,
and so on, so every result keeps its place whatever the limit.

Chosen on real conversations (benchmarks/real_dialogues.py: LoCoMo's five development conversations,
760 questions; a hit counts when it is an evidence turn), any@1/@5/@10 over the questions:

- lexical weighed twice, the others once, k=5: 0.409/0.684/0.766 (0.501/0.817/0.883 counting the
  turns shown around each hit); equal weights: 0.371/0.672/0.762; lexical three times: 0.426/0.675/0.764;
- the rank stretched by the weight instead (``1 / ((position + 1) / weight + k - 1)``, Qdrant's
  weighted RRF), best at k=3: 0.374/0.688/0.762 but 0.467/0.808/0.879 with the turns around;
- k=20: 0.357/0.643/0.743 with equal weights; k=60: 0.357/0.626/0.711;
- dense alone 0.083/0.236/0.328 and lexical alone 0.386/0.626/0.718: the embedder reads short replies
  as close to any question, so the words count for more here than in the set built here
  (benchmarks/long_dialogues.py), where equal weights had been chosen.

Once the question was embedded without the speakers it names (``retrieve.names``: dense alone
0.242/0.553/0.658), on the same conversations: named ranking weighed 1.5 0.422/0.714/0.801, weighed
1 0.413/0.705/0.797, 2 0.416/0.709/0.808 (temporal questions lost at @5); equal weights
0.391/0.700/0.800; k=10 0.421/0.708/0.807 (open-domain lost at @5); scores summed instead of ranks
(cosine, BM25 divided by its ceiling, named cosine, weights 1/1/1) 0.458/0.734/0.807, close, but a
sum of scores computed three ways (numpy, SQL, Qdrant) orders near ties differently, ranks do not.
A question that names a date (``with_dated``): the same search among the memories dated then as one
more ranking of weight 2, 0.447/0.732/0.807 (of weight 1 0.439/0.728/0.807, of 3 0.449/0.730/0.807
with an open-domain question lost); on the 93 questions that name a date any@1/@5/@10 went from
0.290/0.699/0.839 to 0.495/0.839/0.882.

Every index fuses with ``reciprocal_rank_fusion`` or the same sums in SQL; Qdrant's index fuses its
server's three rankings here, since the server's weighted fusion stretches the rank instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

Ranking = Sequence[tuple[str, float]]
Method = Literal["hybrid", "dense", "lexical"]

RRF_K = 5
"""The rank constant: a memory at position p of a ranking scores ``weight / (RRF_K + p)`` there."""
WEIGHTS = (1.0, 2.0, 1.5)
"""The weight of the dense, lexical and named rankings, in that order."""
DATED_WEIGHT = 2.0
"""The weight of the ranking of the memories dated when a question asks about (``with_dated``)."""
POOL = 100
"""How many candidates each ranking contributes to a fusion, whatever the limit."""


def rrf_score(position: int, weight: float) -> float:
    """What a memory at ``position`` (from 0) of a ranking of ``weight`` adds to its fused score."""
    return weight / (RRF_K + position)


def reciprocal_rank_fusion(
    dense: Ranking, lexical: Ranking, named: Ranking, keys: Mapping[str, str]
) -> list[tuple[str, float]]:
    """Ids by the sum of their ``rrf_score`` in each ranking (``WEIGHTS``), best first; equal sums by
    their place in ``lexical`` (missing: after all of it), then by their key (``keys``)."""
    fused: dict[str, float] = {}
    for ranking, weight in zip((dense, lexical, named), WEIGHTS, strict=True):
        for position, (item, _) in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + rrf_score(position, weight)
    place = {item: position for position, (item, _) in enumerate(lexical)}
    return sorted(
        fused.items(), key=lambda pair: (-pair[1], place.get(pair[0], len(lexical)), keys.get(pair[0], ""))
    )


def with_dated(fused: Ranking, dated: Ranking) -> list[tuple[str, float]]:
    """``fused`` with the same search among the memories dated when the question asks about
    (``record.dates.query_span``) as one more ranking of weight ``DATED_WEIGHT``: a memory adds
    ``rrf_score(position, DATED_WEIGHT)`` for its place there. Equal sums keep their order in
    ``fused``, then in ``dated``."""
    scores = dict(fused)
    for position, (item, _) in enumerate(dated):
        scores[item] = scores.get(item, 0.0) + rrf_score(position, DATED_WEIGHT)
    order = {item: place for place, item in enumerate(dict.fromkeys(item for item, _ in [*fused, *dated]))}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def tiers(limit: int) -> Iterator[int]:
    """The pool sizes that serve ``limit`` results: ``POOL``, then doubled until one reaches ``limit``.
    The results of one tier fill the places up to its pool size."""
    pool = POOL
    yield pool
    while pool < limit:
        pool *= 2
        yield pool

"""BM25 over the memories of one scope (pure functions).

FTS5's own ``bm25()`` takes its statistics (how many memories hold a term, the average length) from
the whole index, so a session's scores, and its order, change with what other sessions stored. Here
the statistics come from the scope being searched: a session's results are the same alone in a store
or beside thousands of other sessions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class ScopeStatistics:
    """How many memories the scope holds and their average length in terms."""

    documents: int
    average_length: float


def idf(documents: int, holding: int) -> float:
    """Inverse document frequency, never negative (a term in most memories still counts a little)."""
    return math.log(1.0 + (documents - holding + 0.5) / (holding + 0.5))


def bm25(
    candidates: Sequence[tuple[str, Sequence[str]]], wanted: Sequence[str], scope: ScopeStatistics
) -> list[tuple[str, float]]:
    """``(key, score)`` of each candidate (its key and its terms) for the query terms ``wanted``, best
    first (equal scores by key); candidates must be every memory of the scope that holds any wanted
    term, so that how many hold each term is counted among them.

    Scores are divided by the sum of the query terms' weights (what a memory of average length holding
    each term once would score): about 0 to 1, how much of the query a memory holds, comparable from
    one query to the next."""
    wanted_set = set(wanted)
    counts = [(memory_id, Counter(t for t in memory_terms if t in wanted_set), len(memory_terms))
              for memory_id, memory_terms in candidates]  # fmt: skip
    holding = Counter(term for _, found, _ in counts for term in found)
    documents = max(scope.documents, len(candidates))
    weights = {term: idf(documents, holding[term]) for term in dict.fromkeys(wanted)}
    ceiling = sum(weights.values()) or 1.0
    average = scope.average_length or 1.0
    scored = []
    for memory_id, found, length in counts:
        norm = K1 * (1 - B + B * length / average)
        # In the query's term order, as every index adds them: equal memories score equal to the bit.
        score = sum(weights[t] * found[t] * (K1 + 1) / (found[t] + norm) for t in weights if t in found)
        if score > 0:
            scored.append((memory_id, score / ceiling))
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))

"""The second stage of a hybrid search (pure functions): the first ``DEPTH`` memories of the fused
ranking put in the order of a weighted sum of what tells an answer from a line that only looks like
one, the rest left as fused.

What counts for a memory (``Candidate``), each a number (``features``):

- its place in the fused ranking (``5 / (5 + place)`` and ``1 / (1 + place)``);
- said by a speaker the question names (the named ranking is one of three in the fusion; here it
  counts again, for "What did Caroline research?" is about Caroline's own lines);
- it asks (a line that asks is seldom the answer);
- its length in words (up to ``LONGEST`` words: "Wow, that's cool!" is close to any question);
- the share of the question's words it holds;
- it is the line after a line that asks among the first ``ASKED_IN`` (``retrieve.answers``);
- how high the best three memories of its own day rank among the first ``DAY_PLACES`` (what a
  question is about is talked about on a day, more than once);
- it says when (a relative date: "last week", "yesterday") and the question asks when.

The weights were fitted on LoCoMo's five development conversations by logistic regression, one
memory a row (an evidence turn or not), and judged by fitting on four conversations and ranking the
fifth, in turn (``benchmarks/rerank_fit.py`` fits and prints them): any@1 / @5 / @10 / session@10
0.511 / 0.809 / 0.861 / 0.951 on the conversation left out, against 0.443 / 0.767 / 0.843 / 0.954 for
the fused ranking alone (every category gained at every k of any@k; two single-hop questions lost
their session from the first 10). Every index gives the same fused ranking and the same memories,
so every index re-ranks alike.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEPTH = 30
"""How many of the fused ranking's first memories are re-ranked."""
LONGEST = 40
"""Words past this many make a memory no more likely the answer (an agent's long answer is not)."""
DAY_PLACES = 20
"""The first places of the fused ranking whose days count (``day``)."""
FEATURES = ("place", "top", "named", "asks", "length", "shared", "answer", "day", "when")
WEIGHTS = (2.163, 1.113, 1.459, -0.58, 3.406, 2.088, 1.248, 0.6904, 0.5789)
"""The weight of each of ``FEATURES``, in order (``benchmarks/rerank_fit.py``)."""
_ASKS_WHEN = re.compile(r"\s*(?:when|how long)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """What the re-ranking reads of a memory: its words (as the lexical index has them), whether a
    speaker the question names said it, whether it asks, whether it answers a line that asks near the
    top, its own day (empty when unknown) and whether it says when."""

    words: frozenset[str]
    named: bool
    asks: bool
    answer: bool
    day: str
    says_when: bool


def asks_when(query: str) -> bool:
    """Whether a question asks when something happened (or how long ago)."""
    return bool(_ASKS_WHEN.match(query))


def features(
    ids: Sequence[str], candidates: Mapping[str, Candidate], query_words: frozenset[str], when: bool
) -> list[tuple[float, ...]]:
    """The ``FEATURES`` of each of ``ids`` (the fused ranking's first, in order)."""
    days: dict[str, list[float]] = defaultdict(list)
    for place, memory_id in enumerate(ids[:DAY_PLACES]):
        days[candidates[memory_id].day].append(5 / (5 + place))
    day_score = {day: sum(sorted(scores, reverse=True)[:3]) for day, scores in days.items() if day}
    found: list[tuple[float, ...]] = []
    for place, memory_id in enumerate(ids):
        memory = candidates[memory_id]
        found.append(
            (
                5 / (5 + place),
                1 / (1 + place),
                float(memory.named),
                float(memory.asks),
                math.log1p(min(len(memory.words), LONGEST)) / 4,
                len(memory.words & query_words) / max(len(query_words), 1),
                float(memory.answer),
                day_score.get(memory.day, 0.0),
                float(when and memory.says_when),
            )
        )
    return found


def reranked(
    ranked: list[tuple[str, float]],
    candidates: Mapping[str, Candidate],
    query_words: frozenset[str],
    when: bool,
    weights: Sequence[float] = WEIGHTS,
) -> list[tuple[str, float]]:
    """``ranked`` with its first ``DEPTH`` memories (those in ``candidates``) ordered by the weighted sum
    of their ``features``, equal sums in their fused order; they keep the first ``DEPTH`` scores, in
    order, so scores still fall as places do."""
    head = [memory_id for memory_id, _ in ranked[:DEPTH] if memory_id in candidates]
    if len(head) < 2:
        return ranked
    rows = features(head, candidates, query_words, when)
    sums = [sum(weight * value for weight, value in zip(weights, row, strict=True)) for row in rows]
    order = sorted(range(len(head)), key=lambda place: -sums[place])
    moved = set(head)
    scores = sorted((score for memory_id, score in ranked if memory_id in moved), reverse=True)
    rest = [pair for pair in ranked if pair[0] not in moved]
    return [(head[place], score) for place, score in zip(order, scores, strict=True)] + rest

"""Answers next to their questions (pure functions): in a conversation the line that matches a
question best is often the other person asking it ("What did you take away from it?"), and the
answer is the line after it ("It taught me self-acceptance..."), which shares none of its words. A
line that asks (it holds a ``?``) among the first ``ASKED_IN`` of a search lifts the line recorded
next in its session to at least ``ANSWER_SHARE`` of its own score, so the answer comes right after
the question rather than out of sight, when that line is a candidate of the same search and, when
the query names speakers, is said by one of them.

Chosen on real conversations (benchmarks/real_dialogues.py: LoCoMo's five development
conversations, 760 questions; a hit counts when it is an evidence turn): hybrid any@1/@5/@10 and
session@10 went from 0.443/0.730/0.807/0.957 to 0.443/0.767/0.843/0.954 (multi-hop, temporal and
single-hop any@5/@10 up, open-domain any@k the same; one open-domain and one single-hop question lost
their session in the top 10). Other forms, measured on the same rankings recomputed offline: a share
of 0.7 0.753/0.839 at @5/@10, of 0.9 0.771/0.846 (a session@5 lost); the next line's score raised by
half the question's rather than to a share of it 0.767/0.850 but temporal questions lost at @5; the
line after any line (not only a line that asks) 0.751/0.842; the next line whoever said it
0.734/0.836; the first 5, 10 or 20 lines asking within 0.005 of each other.
"""

from __future__ import annotations

from collections.abc import Mapping

ANSWER_SHARE = 0.8
"""The least an answer scores, as a share of its question's score."""
ASKED_IN = 10
"""How many of a search's first lines may lift the line after them."""


def asks(text: str) -> bool:
    """Whether a line asks something."""
    return "?" in text


def answers_lifted(ranked: list[tuple[str, float]], answers: Mapping[str, str]) -> list[tuple[str, float]]:
    """``ranked`` with each of ``answers``' answers (by its question's id) scoring at least
    ``ANSWER_SHARE`` of its question's score, when the answer is in ``ranked``; best first, equal
    scores in ``ranked``'s order."""
    asked, scores = dict(ranked), dict(ranked)
    for question, answer in answers.items():
        if question in asked and answer in asked:
            scores[answer] = max(scores[answer], ANSWER_SHARE * asked[question])
    order = {memory_id: place for place, (memory_id, _) in enumerate(ranked)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))

"""Answers next to their questions (pure functions): in a conversation the line that matches a
question best is often the other person asking it ("What did you take away from it?"), and the
answer is the line after it ("It taught me self-acceptance..."), which shares none of its words. A
line that asks (it holds a ``?``) among the first ``ASKED_IN`` of a search lifts the line recorded
next in its session to at least ``ANSWER_SHARE`` of its own score, so the answer comes right after
the question rather than out of sight, when that line is a candidate of the same search and, when
the query names speakers, is said by one of them.

Chosen on real conversations (benchmarks/real_dialogues.py: LoCoMo's five development
conversations, 760 questions; a hit counts when it is an evidence turn), hybrid any@1/@5/@10 and
session@10, from 0.447/0.732/0.807/0.957 without it: a share of 0.7 gave 0.447/0.753/0.839/0.954,
0.8 0.447/0.768/0.843/0.954, 0.9 0.447/0.771/0.846/0.954; the next line's score raised by 0.5 of the
question's instead of to a share of it 0.483/0.767/0.850 but temporal questions lost at @5; any next
line, whoever said it, 0.447/0.734/0.836; every line lifting its next one, question or not,
0.447/0.751/0.842. The first 5, 10 or 20 lines asking gave the same figures within 0.005.
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

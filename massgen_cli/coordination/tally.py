"""Vote tallying: pure functions over votes and answers."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from massgen_cli.attempts import Vote


def alias_map(agent_ids: Sequence[str]) -> dict[str, str]:
    """Anonymous aliases in registration order: ``{"agent1": first_id, "agent2": second_id, ...}``."""
    return {f"agent{index}": agent_id for index, agent_id in enumerate(agent_ids, start=1)}


def resolve_target(name: str, agent_ids: Sequence[str]) -> str | None:
    """The real id a vote names, by real id or by alias (case and spacing forgiven); None if unknown."""
    cleaned = name.strip().lower().replace(" ", "").replace("_", "") if name else ""
    for alias, agent_id in alias_map(agent_ids).items():
        if cleaned in (alias, agent_id.lower().replace("_", "")):
            return agent_id
    return None


def tally(votes: Sequence[Vote], answered: Sequence[str], agent_ids: Sequence[str]) -> dict[str, int]:
    """Votes per agent that has an answer, in registration order (agents with no votes count 0)."""
    counts = Counter(vote.target for vote in votes if vote.target in answered)
    return {agent_id: counts[agent_id] for agent_id in agent_ids if agent_id in answered}


def pick_winner(votes: Sequence[Vote], answers: Mapping[str, str], agent_ids: Sequence[str]) -> str | None:
    """Plurality; ties go to registration order; no votes → the first answer (registration order)."""
    answered = [agent_id for agent_id in agent_ids if agent_id in answers]
    if not answered:
        return None
    counts = tally(votes, answered, agent_ids)
    best = max(counts.values())
    return next(agent_id for agent_id in answered if counts[agent_id] == best)


def best_so_far(
    votes: Sequence[Vote],
    answers: Mapping[str, str],
    agent_ids: Sequence[str],
    answered_at: Mapping[str, int],
) -> str | None:
    """The winner of an attempt a halt cut short: by the votes so far (``pick_winner``); with none, the
    latest answer (``answered_at``: the order answers came in), written with the most answers in view."""
    if not answers or any(vote.target in answers for vote in votes):
        return pick_winner(votes, answers, agent_ids)
    return max(answers, key=lambda agent_id: answered_at.get(agent_id, 0))


FILLER_WORDS = (
    "a an the is are was were be of to in on and or it its that this what which who how many much "
    "answer question usually typically often called"
)
"""Words that carry no answer (with the question's own words, left out when answers are compared)."""
_FILLER = frozenset(FILLER_WORDS.split())


def content_words(text: str, question: str = "") -> frozenset[str]:
    """The words of ``text`` that carry its answer: lower-cased, without filler and the question's words."""
    asked = set(re.findall(r"[a-z0-9]+", question.lower()))
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _FILLER and w not in asked)


def agreement_scores(answers: Mapping[str, str], question: str = "") -> dict[str, float]:
    """How much each answer agrees with the others: the sum, over the other answers, of the share of the
    shorter one's content words that both contain (so "Rome" and "The capital is Rome" agree fully)."""
    words = {agent_id: content_words(text, question) for agent_id, text in answers.items()}
    scores = {}
    for agent_id, own in words.items():
        scores[agent_id] = sum(
            len(own & other) / min(len(own), len(other))
            for peer, other in words.items()
            if peer != agent_id and own and other
        )
    return scores


def agreement_leaders(answers: Mapping[str, str], agent_ids: Sequence[str], question: str = "") -> list[str]:
    """The answers the others agree with most (more than one on a tie), in registration order."""
    answered = [agent_id for agent_id in agent_ids if agent_id in answers]
    if not answered:
        return []
    scores = agreement_scores({agent_id: answers[agent_id] for agent_id in answered}, question)
    best = max(scores.values())
    return [agent_id for agent_id in answered if math.isclose(scores[agent_id], best, abs_tol=1e-9)]


def pick_by_agreement(
    answers: Mapping[str, str],
    agent_ids: Sequence[str],
    question: str = "",
    likeness: Mapping[str, float] | None = None,
) -> str | None:
    """The answer the others agree with most. A tie goes to the tied answer most like all the others
    (``likeness``, e.g. by meaning: "The answer is 2." shares no content word with "2 + 2 = 4." or a
    rambling third answer, and registration order alone would pick it), then to registration order."""
    leaders = agreement_leaders(answers, agent_ids, question)
    if not leaders:
        return None
    like = likeness or {}
    return max(leaders, key=lambda agent_id: like.get(agent_id, 0.0))  # the first of equals: registration

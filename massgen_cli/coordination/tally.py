"""Vote tallying: pure functions over votes and answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Vote:
    """``voter`` chose ``target`` (both real agent ids)."""

    voter: str
    target: str
    reason: str = ""


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

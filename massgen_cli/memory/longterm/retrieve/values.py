"""Learned memory values: TD(λ) from coordination outcomes.

Each memory has a value per goal in [0, 1] (0.5 until it learns). When a memory is retrieved into an
agent's context (a hit, or a memory recorded around a hit and shown with it), that agent's eligibility
trace for it grows (``e ← λ·e + 1``; the traces of its
other memories decay, ``e ← λ·e``, one step each retrieval). What the agent's ``memory_search`` tool
finds grows its traces too, within the step (no decay). When the turn ends with a winner, the
reward function scores each traced memory:

- in the winning agent's context: ``reward_winner`` (default 1), with the winner's trace;
- otherwise, in the context of an agent whose answer was rejected: ``reward_rejected`` (default 0),
  with the largest such trace;
- only in the contexts of agents that did not answer: no update.

and its value moves ``v ← v + min(1, α·e)·(r − v)``, which stays inside [0, 1]. A cancelled or
failed turn updates nothing: its traces are dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from massgen_cli.config.memory import ValueLearningConfig

DEFAULT_VALUE = 0.5


@dataclass(frozen=True)
class ValueUpdate:
    memory_id: str
    reward: float
    trace: float


def td_update(value: float, reward: float, trace: float, alpha: float) -> float:
    """One TD(λ) step toward ``reward``, weighted by the eligibility ``trace``; stays in [0, 1]."""
    step = min(1.0, alpha * trace)
    return min(1.0, max(0.0, value + step * (reward - value)))


def blend(similarity: float, value: float, weight: float) -> float:
    """The ranking score: similarity (normalised to [0, 1]) mixed with the learned value."""
    return (1.0 - weight) * similarity + weight * value


class EligibilityTraces:
    """Traces of one turn, per agent and memory."""

    def __init__(self, settings: ValueLearningConfig):
        self.settings = settings
        self.traces: dict[str, dict[str, float]] = defaultdict(dict)

    def observe(self, agent_id: str, memory_ids: Iterable[str]) -> None:
        """One step of ``agent_id``: its traces decay, the memories now in its context grow."""
        traces = self.traces[agent_id]
        for memory_id in traces:
            traces[memory_id] *= self.settings.lambda_
        self.found(agent_id, memory_ids)

    def found(self, agent_id: str, memory_ids: Iterable[str]) -> None:
        """Memories ``agent_id`` found within its step (its memory tool): their traces grow, no other's
        decays."""
        traces = self.traces[agent_id]
        for memory_id in dict.fromkeys(memory_ids):
            traces[memory_id] = traces.get(memory_id, 0.0) + 1.0

    def outcome(self, winner: str, rejected: Iterable[str]) -> list[ValueUpdate]:
        """The updates the turn's outcome calls for (the explicit reward function above)."""
        updates = {
            memory_id: ValueUpdate(memory_id, self.settings.reward_winner, trace)
            for memory_id, trace in self.traces.get(winner, {}).items()
        }
        for agent_id in rejected:
            for memory_id, trace in self.traces.get(agent_id, {}).items():
                if memory_id in updates and updates[memory_id].reward == self.settings.reward_winner:
                    continue
                previous = updates.get(memory_id)
                if previous is None or trace > previous.trace:
                    updates[memory_id] = ValueUpdate(memory_id, self.settings.reward_rejected, trace)
        return list(updates.values())

    def clear(self) -> None:
        self.traces.clear()

"""What the agents of an attempt work from: the answers so far and who gave them when, which version of
that set each agent has seen, and who is still active (for MassGen's fairness cap)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from massgen_cli.coordination.tally import alias_map


@dataclass
class Board:
    """The answers of one attempt; ``version`` counts the new answers, ``answered_at`` is the version of
    each agent's latest answer, ``seen`` the version each agent's current step has seen."""

    order: list[str]
    answers: dict[str, str] = field(default_factory=dict)
    answer_counts: Counter[str] = field(default_factory=Counter)
    version: int = 0
    answered_at: dict[str, int] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    steps: Counter[str] = field(default_factory=Counter)
    resting: set[str] = field(default_factory=set)
    """Agents that voted or can do no more (not active, for the fairness cap)."""

    def add_answer(self, agent_id: str, content: str) -> None:
        self.answers[agent_id] = content
        self.answer_counts[agent_id] += 1
        self.version += 1
        self.answered_at[agent_id] = self.version
        self.seen[agent_id] = self.version

    def vote_aliases(self) -> list[str]:
        """The aliases of the agents that have an answer (what a vote may name)."""
        return [alias for alias, agent_id in alias_map(self.order).items() if agent_id in self.answers]

    def unseen_peers(self, agent_id: str) -> list[str]:
        """Peers whose latest answer came after what ``agent_id`` has seen."""
        seen = self.seen.get(agent_id, 0)
        return [peer for peer in self.order if peer != agent_id and self.answered_at.get(peer, 0) > seen]

    def total_answers(self) -> int:
        return sum(self.answer_counts.values())

    def lead_allowed(self, agent_id: str, cap: int) -> bool:
        """Whether one more answer keeps ``agent_id`` at most ``cap`` answers ahead of the slowest active
        peer (always, with no active peer)."""
        peers = [self.answer_counts[p] for p in self.order if p != agent_id and p not in self.resting]
        return not peers or self.answer_counts[agent_id] + 1 - min(peers) <= cap

    def waiting_for_all(self, agent_id: str, cap: int | None) -> bool:
        """MassGen's defer_voting_until_all_answered: ``agent_id`` is at its answer cap while an agent
        has no answer yet."""
        at_cap = cap is not None and self.answer_counts[agent_id] >= cap
        return at_cap and any(self.answer_counts[p] == 0 for p in self.order if p not in self.resting)

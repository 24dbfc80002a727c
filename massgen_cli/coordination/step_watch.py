"""One agent's coordination step, watched at its tool-call boundaries, as MassGen does with its hooks:

- with ``peer_updates: inject``, peers' new answers are added to the step's next tool result (their
  first 500 characters); an agent with no answer of its own yet is never interrupted; with
  ``fairness_enabled`` at most ``max_midstream_injections_per_round`` peer answers reach one step this way,
  and past that the agent starts again at its next safe point;
- with a round timeout (``timeout_settings``), a tool result past the step's soft limit carries a wrap-up
  notice, and after ``round_timeout_grace_seconds`` more, tools other than ``new_answer`` and ``vote`` are
  refused. Nothing forces a decision on an agent that calls no tools.
"""

from __future__ import annotations

import time

from massgen_cli.coordination.board import Board
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.tally import alias_map

SHOWN_CHARS = 500


class CoordinationWatch:
    """The watch of one step of ``agent_id`` over ``board`` (a ``toolloop.StepWatch``)."""

    def __init__(self, board: Board, agent_id: str, policy: CoordinationPolicy):
        self.board = board
        self.agent_id = agent_id
        self.policy = policy
        timing = policy.timing
        self.grace_s = timing.grace_s
        first = board.answer_counts[agent_id] == 0
        self.soft_s = timing.initial_round_s if first else timing.subsequent_round_s
        self.started = time.monotonic()
        self.warned_at: float | None = None
        self.injected = 0

    def refusal(self) -> str | None:
        """After the wrap-up notice and its grace period, only new_answer and vote are allowed."""
        if self.warned_at is None or time.monotonic() - self.warned_at < self.grace_s:
            return None
        return "this step's time is up: only new_answer and vote are allowed now"

    def notes(self) -> str:
        return "\n\n".join(part for part in (self._peer_update(), self._wrap_up()) if part)

    def _wrap_up(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.soft_s is None or self.warned_at is not None or elapsed < self.soft_s:
            return ""
        self.warned_at = time.monotonic()
        return (
            f"⏰ This step's time is nearly up ({elapsed:.1f}s of {self.soft_s:g}s): wrap up now with "
            f"`new_answer` (work in progress is fine) or `vote`. In {self.grace_s:g}s, other tools will be "
            "refused."
        )

    def _peer_update(self) -> str:
        """Peers' answers this agent has not seen, when they may reach it now (marked seen then)."""
        board, policy = self.board, self.policy
        unseen = board.unseen_peers(self.agent_id)
        if policy.peer_updates != "inject" or not unseen or board.answer_counts[self.agent_id] == 0:
            return ""
        cap = policy.injection_cap
        if policy.answers.fairness and cap is not None and self.injected + len(unseen) > cap:
            return ""  # it starts again at its next safe point
        if self._too_late_for_updates():
            return ""
        self.injected += len(unseen)
        board.seen[self.agent_id] = board.version
        return _update_text(board, unseen)

    def _too_late_for_updates(self) -> bool:
        """Close to the soft limit (within the grace period), a clean start beats new reading."""
        if self.soft_s is None:
            return False
        return self.soft_s - (time.monotonic() - self.started) < self.grace_s


def _update_text(board: Board, peers: list[str]) -> str:
    aliases = {agent_id: alias for alias, agent_id in alias_map(board.order).items()}
    lines = [
        "IMPORTANT: NEW ANSWERS ARRIVED while you were working. Take them into account: vote for the best "
        "answer, build on it, or go on if yours will be better."
    ]
    for peer in peers:
        text = board.answers[peer]
        shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
        lines += [f"<{aliases[peer]}>", shown, f"</{aliases[peer]}>"]
    return "\n".join(lines)

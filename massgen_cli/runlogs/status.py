"""``status.json``: where a run stands, for a script to poll (``--automation``). Rewritten in one step (a
reader never sees half a file) at every change of an agent's state, vote, spend or phase, and once more
when the run is over. Its fields follow MassGen's automation status file where they mean the same here:
``finish_reason``, ``is_complete``, ``meta``, ``costs``, ``coordination.phase``, ``agents`` and
``results``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen_cli.events import (
    AgentStatus,
    AgentText,
    AgentUsage,
    FinalAnswer,
    RunEvent,
    TurnEnded,
    Usage,
    VoteCast,
)
from massgen_cli.redaction import redact
from massgen_cli.state import write_json

PREVIEW_CHARS = 200
"""MassGen's preview length of a final answer (the whole answer is in ``final_answer``)."""
REASON_PREVIEW_CHARS = 100
AGENT_STATES = {
    "working": "streaming",
    "answered": "answered",
    "restarted": "restarting",
    "done": "completed",
    "failed": "error",
}
"""Our agent states as MassGen's status file names them (a vote is ``voted``)."""
TEXT_PHASES = {"presentation": "presentation", "evaluation": "post_evaluation"}


@dataclass
class _Agent:
    status: str = "waiting"
    answers: int = 0
    latest_answer: str | None = None
    vote: dict[str, Any] | None = None
    restarts: int = 0
    error: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(0, 0))

    def fields(self) -> dict[str, Any]:
        used = self.usage
        return {
            "status": self.status,
            "answer_count": self.answers,
            "latest_answer": self.latest_answer,
            "vote_cast": self.vote,
            "times_restarted": self.restarts,
            "error": None if self.error is None else {"type": "error", "message": self.error},
            "token_usage": {
                "input_tokens": used.input_tokens,
                "output_tokens": used.output_tokens,
                "reasoning_tokens": used.reasoning_tokens,
                "cached_input_tokens": used.cached_tokens,
                "estimated_cost": None if used.cost_usd is None else round(used.cost_usd, 6),
            },
        }


class StatusFile:
    """Listens to a run's events and keeps ``path`` current. A write the disk refuses stops it and is
    said once through ``on_failure``; the run goes on."""

    def __init__(
        self,
        path: Path,
        agent_ids: Sequence[str],
        meta: dict[str, Any],
        on_failure: Callable[[str], None],
    ):
        self.path = path
        self.meta = meta
        self.on_failure = on_failure
        self.failed = False
        self.agents = {agent_id: _Agent() for agent_id in agent_ids}
        self.phase = "initial_answer"
        self.started = (time.time(), time.monotonic())
        self.result: dict[str, Any] = {"votes": {}, "winner": None, "final_answer": None}
        self.ending: dict[str, Any] = {"finish_reason": "in_progress", "finish_reason_details": None}
        self.write()

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, AgentText):
            phase = TEXT_PHASES.get(event.kind)
            if phase is None or phase == self.phase:
                return  # text streams by the token: only a change of phase is worth a write
            self.phase = phase
        elif isinstance(event, AgentStatus):
            self._status(event)
        elif isinstance(event, VoteCast):
            self._vote(event)
        elif isinstance(event, AgentUsage):
            agent = self.agents.setdefault(event.agent_id, _Agent())
            agent.usage = agent.usage + event.usage
        elif isinstance(event, FinalAnswer):
            self.result.update(winner=event.agent_id, final_answer=event.text)
        elif isinstance(event, TurnEnded):
            self.result.update(votes=dict(event.votes), winner=event.winner or self.result["winner"])
            self.ending["finish_reason_details"] = event.reason
        else:
            return
        self.write()

    def _status(self, event: AgentStatus) -> None:
        agent = self.agents.setdefault(event.agent_id, _Agent())
        agent.status = AGENT_STATES.get(event.status, event.status)
        if event.status == "answered":
            agent.answers += 1
            agent.latest_answer = event.detail
            for each in self.agents.values():  # a new answer clears every vote cast before it
                each.vote = None
            self.phase = "initial_answer"
        elif event.status == "restarted":
            agent.restarts += 1
        elif event.status == "failed":
            agent.error = event.detail

    def _vote(self, event: VoteCast) -> None:
        agent = self.agents.setdefault(event.voter, _Agent())
        agent.status = "voted"
        agent.vote = {"voted_for_agent": event.target, "reason_preview": event.reason[:REASON_PREVIEW_CHARS]}
        self.phase = "enforcement"

    def finish(self, reason: str, details: str | None, exit_code: int) -> None:
        """The run is over: how it ended (``completed``, ``error``, ``timeout``, ``interrupted``) and the
        exit code the process ends with."""
        self.phase = "done"
        for agent in self.agents.values():  # none will be called again
            agent.status = agent.status if agent.status == "error" else "completed"
        details = details or self.ending["finish_reason_details"]
        self.ending = {"finish_reason": reason, "finish_reason_details": details, "exit_code": exit_code}
        self.write()

    def status(self) -> dict[str, Any]:
        """The file's content now."""
        wall, monotonic = self.started
        agents = {agent_id: agent.fields() for agent_id, agent in self.agents.items()}
        spent = Usage.total(agent.usage for agent in self.agents.values())
        final = self.result["final_answer"]
        return {
            **self.ending,
            "is_complete": self.phase == "done",
            "meta": {
                **self.meta,
                "last_updated": time.time(),
                "start_time": wall,
                "elapsed_seconds": round(time.monotonic() - monotonic, 3),
            },
            "costs": {
                "total_estimated_cost": None if spent.cost_usd is None else round(spent.cost_usd, 6),
                "total_input_tokens": spent.input_tokens,
                "total_output_tokens": spent.output_tokens,
            },
            "coordination": {"phase": self.phase, "is_final_presentation": self.phase == "presentation"},
            "agents": agents,
            "results": {
                **self.result,
                "final_answer_preview": None if final is None else final[:PREVIEW_CHARS],
            },
        }

    def write(self) -> None:
        if self.failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.path, redact(self.status()))
        except OSError as error:
            self.failed = True
            self.on_failure(f"the status file {self.path} stopped: {error}")

"""The ledger: a listener of the run's events that keeps what a turn's summary reports of them — how each
agent's attempt went, the warnings said, the tool calls made and the tokens and cost spent (in the
attempt, the turn and the whole run), and how long
requests waited for their providers' rate limits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from massgen_cli.events import (
    AgentStatus,
    AgentUsage,
    BreakerChanged,
    Notice,
    RateLimitWait,
    RunEvent,
    ToolFinished,
    Usage,
    VoteCast,
)
from massgen_cli.text import one_line

WARNING_LEVELS = ("warning", "degraded", "error")
STATUS_DETAIL_CHARS = 300


@dataclass
class AttemptTally:
    """What the events of one attempt said."""

    agent_status: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    tool_calls: dict[str, Counter[str]] = field(default_factory=dict)
    usage: dict[str, Usage] = field(default_factory=dict)
    rate_limit_wait_s: float = 0.0
    """Seconds the attempt's requests waited for their providers' rate limits, summed."""


class Ledger:
    """Tallies the events of the current attempt, and the usage of the whole turn and of the run."""

    def __init__(self, agent_ids: Sequence[str]):
        self.agent_ids = list(agent_ids)
        self.attempt = AttemptTally()
        self.turn_usage: dict[str, Usage] = {}
        self.run_usage: dict[str, Usage] = {}
        self.standing: list[str] = []
        """Warnings of the run's start (the config's ignored keys, MCP servers that did not start): each
        attempt's summary lists them, as each attempt ran without what they name."""
        self.started = False

    def begin_turn(self) -> None:
        self.turn_usage = {}

    def begin_attempt(self) -> None:
        if not self.started:  # what was said before the first attempt stands for the run
            self.standing += [w for w in self.attempt.warnings if w not in self.standing]
            self.started = True
        self.attempt = AttemptTally(warnings=list(self.standing))

    def __call__(self, event: RunEvent) -> None:
        tally = self.attempt
        if isinstance(event, AgentStatus) and event.status != "working":
            detail = one_line(event.detail, STATUS_DETAIL_CHARS)
            tally.agent_status[event.agent_id] = {"status": event.status, "detail": detail}
        elif isinstance(event, VoteCast):  # in summary.json, a vote is the state voted: `target: reason`
            detail = one_line(f"{event.target}: {event.reason}", STATUS_DETAIL_CHARS)
            tally.agent_status[event.voter] = {"status": "voted", "detail": detail}
        elif (said := _warning(event)) is not None:
            if said not in tally.warnings:
                tally.warnings.append(said)
        elif isinstance(event, RateLimitWait):
            tally.rate_limit_wait_s += event.seconds
        elif isinstance(event, ToolFinished):
            counts = tally.tool_calls.setdefault(event.agent_id, Counter(calls=0, failed=0))
            counts.update({"calls": 1, "failed": int(not event.ok)})
        elif isinstance(event, AgentUsage):
            for spent in (tally.usage, self.turn_usage, self.run_usage):
                spent[event.agent_id] = spent.get(event.agent_id, Usage(0, 0)) + event.usage

    def attempt_usage(self) -> dict[str, Usage]:
        """Each agent's usage in this attempt (zero for an agent that made no call)."""
        return {agent_id: self.attempt.usage.get(agent_id, Usage(0, 0)) for agent_id in self.agent_ids}

    def usage_of_turn(self) -> dict[str, Usage]:
        """Each agent's usage in this turn so far, its earlier attempts included."""
        return {agent_id: self.turn_usage.get(agent_id, Usage(0, 0)) for agent_id in self.agent_ids}

    def usage_of_run(self) -> dict[str, Usage]:
        """Each agent's usage in the run so far (every turn of this process)."""
        return dict(self.run_usage)

    def tool_calls(self, agent_id: str) -> dict[str, int]:
        """``{calls, failed}`` of the agent in this attempt."""
        return dict(self.attempt.tool_calls.get(agent_id, Counter(calls=0, failed=0)))


def _warning(event: RunEvent) -> str | None:
    """The line a warning, a degradation, an error or a circuit breaker's change adds to the summary."""
    if isinstance(event, Notice) and event.level in WARNING_LEVELS:
        return event.message
    return event.describe() if isinstance(event, BreakerChanged) else None

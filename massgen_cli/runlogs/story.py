"""What happened in one attempt, agent by agent, on one time axis (seconds from the attempt's start).

Each agent has a lane: its steps (a backend call, from its request to its end, with the time it streamed
text) and marks along them: tool calls, new answers, votes, restarts (and whose answer caused them),
compressions, memory retrieved and recorded, the final answer. The text account (``account``) and the
HTML report (``report``) both tell this story.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from massgen_cli.events import (
    AgentStatus,
    AgentText,
    AgentUsage,
    MemoryRetrieved,
    Notice,
    RunEvent,
    SteeringMessage,
    TurnEnded,
    Usage,
    VoteCast,
)
from massgen_cli.feature_events import PlanMade
from massgen_cli.runlogs.marks import Lane, Marks, Step
from massgen_cli.runlogs.reader import AttemptRecord, LoggedEvent

_DECISIONS = ("answered", "restarted", "done", "failed")


@dataclass(frozen=True)
class AttemptStory:
    """An attempt told agent by agent; ``notices`` are its warnings and errors, in order; ``steering``
    the messages a person sent it while it worked (when each reached the agents, and its text)."""

    record: AttemptRecord
    started: datetime | None
    duration: float
    lanes: list[Lane]
    notices: list[str]
    steering: list[tuple[float, str]] = dataclasses.field(default_factory=list)
    turn_hooks: list[tuple[float, str]] = dataclasses.field(default_factory=list)
    """What the turn's own hooks (turn_start, turn_end) decided, when."""

    @property
    def summary(self) -> dict[str, Any]:
        return self.record.summary or {}

    @property
    def winner(self) -> str | None:
        return self.summary.get("winner")

    @property
    def usage(self) -> Usage:
        return Usage.total(lane.usage for lane in self.lanes)

    def verdict(self) -> str:
        """Who won and why: the votes for the winner with their reasons, or how the attempt ended."""
        reason = str(self.summary.get("end_reason") or "no summary: the attempt did not finish")
        if not self.winner:
            return f"no winner: {reason}"
        votes = self.summary.get("votes") or []
        backing = [vote for vote in votes if vote.get("target") == self.winner]
        if not votes:
            return f"{self.winner} won: {reason}"
        reasons = "; ".join(
            f"{vote.get('voter')}: {vote.get('reason') or 'no reason given'}" for vote in backing
        )
        return f"{self.winner} won with {len(backing)} of {len(votes)} votes ({reasons}); {reason}"


def tell(record: AttemptRecord) -> AttemptStory:
    """The story of ``record``'s events and requests."""
    origin = _origin(record)
    clock = _Clock(origin)
    lanes = {agent_id: Lane(agent_id) for agent_id in _agents(record)}
    marks = Marks(lanes, has_recall_events=any(isinstance(e.event, MemoryRetrieved) for e in record.events))
    for logged in record.events:
        marks.add(logged.event, clock(logged))
    marks.unfinished_tools()
    for lane in lanes.values():
        lane.steps = _steps(lane.agent_id, record, clock)
        lane.usage = Usage.total(usage for _, usage in clock.usages(record.events, lane.agent_id))
        lane.marks.sort(key=lambda mark: mark.at)
        if record.summary is not None:
            _mark_uncounted_votes(lane, record.summary)
    ends = [step.end for lane in lanes.values() for step in lane.steps] + [clock(e) for e in record.events]
    notices = marks.notices + _unread(record)
    duration = max(ends, default=0.0)
    lanes_told = list(lanes.values())
    return AttemptStory(record, origin, duration, lanes_told, notices, marks.steering, marks.turn_hooks)


def _unread(record: AttemptRecord) -> list[str]:
    """The lines of the log that are no event are said, so that a story told without them is known to be
    partial."""
    count = record.unreadable_lines
    if not count:
        return []
    return [
        f"log: {count} line(s) of events.jsonl left out (damaged, or an event this version does not know)"
    ]


class _Clock:
    """Seconds from the attempt's start."""

    def __init__(self, origin: datetime | None):
        self.origin = origin

    def __call__(self, logged: LoggedEvent) -> float:
        return self.at(logged.time)

    def at(self, when: datetime | None) -> float:
        if when is None or self.origin is None:
            return 0.0
        return (when - self.origin).total_seconds()

    def usages(self, events: list[LoggedEvent], agent_id: str) -> list[tuple[float, Usage]]:
        return [
            (self(logged), logged.event.usage)
            for logged in events
            if isinstance(logged.event, AgentUsage)
            and logged.event.agent_id == agent_id
            and not logged.event.via
        ]


def _mark_uncounted_votes(lane: Lane, summary: dict[str, Any]) -> None:
    """A vote the tally did not count (cleared by a later answer, or replaced) is marked so (``ok`` false):
    only the agent's last vote can count, when the summary lists it."""
    counted = {(vote.get("voter"), vote.get("target")) for vote in summary.get("votes") or []}
    votes = lane.of("vote")
    for index, mark in enumerate(lane.marks):
        if mark.vote is not None and (
            mark is not votes[-1] or (lane.agent_id, mark.vote.target) not in counted
        ):
            lane.marks[index] = dataclasses.replace(mark, title=f"{mark.title} (not counted)", ok=False)


def usage_of(fields: Any) -> Usage:
    """A ``Usage`` from its logged fields (what an older or newer log lacks or adds is left out)."""
    if not isinstance(fields, dict):
        return Usage(0, 0)
    names = {item.name for item in dataclasses.fields(Usage)}
    return Usage(**{key: value for key, value in fields.items() if key in names})


def _origin(record: AttemptRecord) -> datetime | None:
    times = [logged.time for logged in record.events]
    known = [when for when in times if when is not None] + [request.time for request in record.requests]
    return min(known, default=None)


def _agents(record: AttemptRecord) -> list[str]:
    """The agents in registration order: their first events come in that order, as the attempt starts."""
    seen: dict[str, None] = {}
    for logged in record.events:
        if (agent_id := _agent_of(logged.event)) is not None:
            seen.setdefault(agent_id, None)
    for agent_id in [*(record.summary or {}).get("usage", {}), *(r.agent_id for r in record.requests)]:
        seen.setdefault(agent_id, None)
    return list(seen)


def _steps(agent_id: str, record: AttemptRecord, clock: _Clock) -> list[Step]:
    """The agent's backend calls: each from its request to the agent's next usage report (a call reports
    what it spent as it ends, cancelled or not), streaming from its first text."""
    requests = sorted((r for r in record.requests if r.agent_id == agent_id), key=lambda r: r.number)
    usages = clock.usages(record.events, agent_id)
    texts = [
        clock(e) for e in record.events if isinstance(e.event, AgentText) and e.event.agent_id == agent_id
    ]
    decisions = [(clock(e), e.event) for e in record.events if _decides(e.event, agent_id)]
    starts = [clock.at(request.time) for request in requests]
    steps, used = [], 0
    for index, request in enumerate(requests):
        start = starts[index]
        following = starts[index + 1] if index + 1 < len(starts) else float("inf")
        while used < len(usages) and usages[used][0] < start:
            used += 1  # a summary's usage, reported before this request went out
        end, usage = usages[used] if used < len(usages) and usages[used][0] < following else (start, None)
        used += usage is not None
        streamed = next((at for at in texts if start <= at <= end), None)
        decision = next((event for at, event in decisions if start <= at < following), None)
        steps.append(Step(request.number, request.purpose, start, end, streamed, usage, _cut_by(decision)))
    return steps


def _cut_by(decision: RunEvent | None) -> str:
    """The restart that cut a step off or set its decision aside (its first decision), or ""."""
    if isinstance(decision, AgentStatus) and decision.status == "restarted":
        return decision.detail or "restarted"
    return ""


def _agent_of(event: RunEvent) -> str | None:
    """The agent an event is of (None for a notice, a steering message or a turn's end)."""
    if isinstance(event, VoteCast):
        return event.voter
    return None if isinstance(event, Notice | SteeringMessage | TurnEnded | PlanMade) else event.agent_id


def _decides(event: RunEvent, agent_id: str) -> bool:
    """Whether ``event`` is a decision of ``agent_id``'s: an answer, a vote, a restart, its end."""
    if isinstance(event, VoteCast):
        return event.voter == agent_id
    return isinstance(event, AgentStatus) and event.agent_id == agent_id and event.status in _DECISIONS

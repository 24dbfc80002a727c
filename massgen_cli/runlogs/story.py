"""What happened in one attempt, agent by agent, on one time axis (seconds from the attempt's start).

Each agent has a lane: its steps (a backend call, from its request to its end, with the time it streamed
text) and marks along them: tool calls, new answers, votes, restarts (and whose answer caused them),
compressions, memory retrieved and recorded, the final answer. The text account (``account``) and the
HTML report (``report``) both tell this story.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from massgen_cli.events import (
    AgentStatus,
    AgentText,
    AgentUsage,
    FinalAnswer,
    MemoryRecorded,
    MemoryRetrieved,
    Notice,
    RunEvent,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    Usage,
    VoteCast,
)
from massgen_cli.runlogs.reader import AttemptRecord, LoggedEvent
from massgen_cli.text import one_line

TITLE_CHARS = 90
_COMPRESSED = re.compile(r"^📦 \[(?P<agent>[^\]]+)\] (?P<text>.*)", re.S)
_RETRIEVED_NOTICE = re.compile(r"^✅ Total: (?P<count>\d+) memories retrieved for (?P<agent>\S+)$")
_DECISIONS = ("answered", "restarted", "done", "failed")
_SHOWN_NOTICES = ("warning", "degraded", "error")


@dataclass(frozen=True)
class Step:
    """One backend call: ``purpose`` is ``coordination``, ``final_answer``, ``post_evaluation``…;
    ``ended_by`` the restart that cut it off or set its decision aside (empty when none did)."""

    number: int
    purpose: str
    start: float
    end: float
    streamed_from: float | None = None
    usage: Usage | None = None
    ended_by: str = ""

    @property
    def seconds(self) -> float:
        return max(self.end - self.start, 0.0)


@dataclass(frozen=True)
class Mark:
    """Something that happened to an agent at ``at`` (until ``until`` for a tool call): ``kind`` is one
    of ``answer``, ``vote``, ``restart``, ``tool``, ``recall``, ``record``, ``compression``, ``final``,
    ``done``, ``failed``; ``details`` are (label, text) pairs, the content shown on demand; ``cause``
    the agent and time of the new answer that restarted the agent (restarts only); ``vote`` the vote
    (votes only)."""

    kind: str
    at: float
    title: str
    details: tuple[tuple[str, str], ...] = ()
    until: float | None = None
    ok: bool = True
    cause: tuple[str, float] | None = None
    vote: VoteCast | None = None


@dataclass
class Lane:
    """One agent's steps and marks, and what it spent."""

    agent_id: str
    steps: list[Step] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage(0, 0))

    def of(self, *kinds: str) -> list[Mark]:
        return [mark for mark in self.marks if mark.kind in kinds]

    @property
    def busy_seconds(self) -> float:
        return sum(step.seconds for step in self.steps)

    @property
    def tool_calls(self) -> tuple[int, int]:
        """(calls, failed calls)."""
        tools = self.of("tool")
        return len(tools), sum(not mark.ok for mark in tools)


@dataclass(frozen=True)
class AttemptStory:
    """An attempt told agent by agent; ``notices`` are its warnings and errors, in order."""

    record: AttemptRecord
    started: datetime | None
    duration: float
    lanes: list[Lane]
    notices: list[str]

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
    marks = _Marks(
        clock, lanes, has_recall_events=any(isinstance(e.event, MemoryRetrieved) for e in record.events)
    )
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
    return AttemptStory(record, origin, max(ends, default=0.0), list(lanes.values()), notices)


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
            if isinstance(logged.event, AgentUsage) and logged.event.agent_id == agent_id
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
    """The agent an event is of (None for a notice or a turn's end)."""
    if isinstance(event, VoteCast):
        return event.voter
    return None if isinstance(event, Notice | TurnEnded) else event.agent_id


def _decides(event: RunEvent, agent_id: str) -> bool:
    """Whether ``event`` is a decision of ``agent_id``'s: an answer, a vote, a restart, its end."""
    if isinstance(event, VoteCast):
        return event.voter == agent_id
    return isinstance(event, AgentStatus) and event.agent_id == agent_id and event.status in _DECISIONS


class _Marks:
    """Turns events into marks on the lanes, and keeps the attempt's warnings and errors."""

    def __init__(self, clock: _Clock, lanes: dict[str, Lane], *, has_recall_events: bool):
        self.clock = clock
        self.lanes = lanes
        self.has_recall_events = has_recall_events
        self.tools_started: dict[str, tuple[float, ToolStarted]] = {}
        self.answers: list[tuple[float, str]] = []
        self.notices: list[str] = []

    def add(self, event: RunEvent, at: float) -> None:
        if isinstance(event, AgentStatus):
            self._status(event, at)
        elif isinstance(event, VoteCast):
            self._vote(event, at)
        elif isinstance(event, ToolStarted):
            self.tools_started[event.call_id] = (at, event)
        elif isinstance(event, ToolFinished):
            self._tool(event, at)
        elif isinstance(event, FinalAnswer):
            self._put(
                event.agent_id,
                Mark("final", at, f"final answer: {_short(event.text)}", (("answer", event.text),)),
            )
        elif isinstance(event, MemoryRetrieved):
            self._retrieved(event, at)
        elif isinstance(event, MemoryRecorded):
            self._recorded(event, at)
        elif isinstance(event, Notice):
            self._notice(event, at)

    def _put(self, agent_id: str, mark: Mark) -> None:
        lane = self.lanes.get(agent_id)
        if lane is not None:
            lane.marks.append(mark)

    def _status(self, event: AgentStatus, at: float) -> None:
        agent_id, status, detail = event.agent_id, event.status, event.detail
        if status == "answered":
            self.answers.append((at, agent_id))
            self._put(agent_id, Mark("answer", at, f"new answer: {_short(detail)}", (("answer", detail),)))
        elif status == "restarted":
            cause = next(
                ((who, when) for when, who in reversed(self.answers) if when <= at and who != agent_id), None
            )
            by = f" by {cause[0]}'s new answer" if cause else ""
            details = (
                ("why", detail or "restarted"),
                ("caused by", f"{cause[0]}'s new answer" if cause else "—"),
            )
            self._put(agent_id, Mark("restart", at, f"restarted{by}: {_short(detail)}", details, cause=cause))
        elif status in ("done", "failed"):
            self._put(agent_id, Mark(status, at, f"{status}: {_short(detail)}", (("detail", detail),)))

    def _vote(self, event: VoteCast, at: float) -> None:
        details = (("vote for", event.target), ("reason", event.reason or "none given"))
        title = f"vote → {event.target}: {_short(event.reason)}"
        self._put(event.voter, Mark("vote", at, title, details, vote=event))

    def _tool(self, event: ToolFinished, at: float) -> None:
        started, call = self.tools_started.pop(event.call_id, (at, None))
        arguments = call.arguments if call is not None else {}
        details = (
            ("tool", event.name),
            ("arguments", json.dumps(arguments, indent=1, ensure_ascii=False)),
            ("result", f"{'ok' if event.ok else 'failed'} · {event.seconds}s · {event.chars} chars"),
            ("summary", event.summary),
        )
        title = f"{event.name} {'✓' if event.ok else '✗'} {_short(event.summary)}"
        self._put(event.agent_id, Mark("tool", started, title, details, until=at, ok=event.ok))

    def unfinished_tools(self) -> None:
        """Tool calls that never finished (their step was cancelled, or the process ended) are marked so."""
        for started, call in self.tools_started.values():
            details = (
                ("tool", call.name),
                ("arguments", json.dumps(call.arguments, indent=1, ensure_ascii=False)),
                ("result", "none: the call did not finish"),
            )
            title = f"{call.name} ✗ did not finish"
            self._put(call.agent_id, Mark("tool", started, title, details, until=started, ok=False))
        self.tools_started.clear()

    def _retrieved(self, event: MemoryRetrieved, at: float) -> None:
        details = [("reason", event.reason), ("query", event.query)]
        for number, memory in enumerate(event.memories, start=1):
            label = (
                f"#{number} · score {memory.score:.2f} · by {memory.owner or '?'}, "
                f"turn {memory.turn}, session {memory.session_id or '?'}"
            )
            details.append((label, memory.text))
        title = f"memory: {len(event.memories)} retrieved ({event.reason})"
        self._put(event.agent_id, Mark("recall", at, title, tuple(details)))

    def _recorded(self, event: MemoryRecorded, at: float) -> None:
        details = tuple(
            (f"{record.key or record.memory_id} ({'new' if record.new else 'seen before'})", record.text)
            for record in event.records
        )
        self._put(event.agent_id, Mark("record", at, f"memory: {len(event.records)} recorded", details))

    def _notice(self, event: Notice, at: float) -> None:
        message = event.message
        if compressed := _COMPRESSED.match(message):
            text = compressed.group("text")
            mark = Mark("compression", at, f"compressed: {_short(text)}", (("compression", text),))
            self._put(compressed.group("agent"), mark)
        elif (retrieved := _RETRIEVED_NOTICE.match(message)) and not self.has_recall_events:
            note = "this log predates the record of what was retrieved; only the count is known"
            title = f"memory: {retrieved.group('count')} retrieved"
            self._put(retrieved.group("agent"), Mark("recall", at, title, (("note", note),)))
        if event.level in _SHOWN_NOTICES:
            self.notices.append(f"{event.level}: {message}")


def _short(text: str) -> str:
    return one_line(text, TITLE_CHARS)

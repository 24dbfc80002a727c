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

from massgen_cli.events import Usage
from massgen_cli.runlogs.reader import AttemptRecord, moment
from massgen_cli.text import one_line

TITLE_CHARS = 90
_COMPRESSED = re.compile(r"^📦 \[(?P<agent>[^\]]+)\] (?P<text>.*)", re.S)
_RETRIEVED_NOTICE = re.compile(r"^✅ Total: (?P<count>\d+) memories retrieved for (?P<agent>\S+)$")
_DECISIONS = ("answered", "voted", "restarted", "done", "failed")
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
    the agent and time of the new answer that restarted the agent (restarts only)."""

    kind: str
    at: float
    title: str
    details: tuple[tuple[str, str], ...] = ()
    until: float | None = None
    ok: bool = True
    cause: tuple[str, float] | None = None


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
        clock, lanes, has_recall_events=any(e.get("type") == "MemoryRetrieved" for e in record.events)
    )
    for event in record.events:
        marks.add(event)
    marks.unfinished_tools()
    for lane in lanes.values():
        lane.steps = _steps(lane.agent_id, record, clock)
        lane.usage = Usage.total(usage for _, usage in clock.usages(record.events, lane.agent_id))
        lane.marks.sort(key=lambda mark: mark.at)
        if record.summary is not None:
            _mark_uncounted_votes(lane, record.summary)
    ends = [step.end for lane in lanes.values() for step in lane.steps] + [clock(e) for e in record.events]
    return AttemptStory(record, origin, max(ends, default=0.0), list(lanes.values()), marks.notices)


class _Clock:
    """Seconds from the attempt's start."""

    def __init__(self, origin: datetime | None):
        self.origin = origin

    def __call__(self, event: dict[str, Any]) -> float:
        return self.at(moment(str(event.get("time", ""))))

    def at(self, when: datetime | None) -> float:
        if when is None or self.origin is None:
            return 0.0
        return (when - self.origin).total_seconds()

    def usages(self, events: list[dict[str, Any]], agent_id: str) -> list[tuple[float, Usage]]:
        return [
            (self(event), usage_of(event.get("usage")))
            for event in events
            if event.get("type") == "AgentUsage" and event.get("agent_id") == agent_id
        ]


def _mark_uncounted_votes(lane: Lane, summary: dict[str, Any]) -> None:
    """A vote the tally did not count (cleared by a later answer, or replaced) is marked so (``ok`` false):
    only the agent's last vote can count, when the summary lists it."""
    counted = {(vote.get("voter"), vote.get("target")) for vote in summary.get("votes") or []}
    votes = lane.of("vote")
    for index, mark in enumerate(lane.marks):
        target = dict(mark.details).get("vote for")
        if mark.kind == "vote" and (mark is not votes[-1] or (lane.agent_id, target) not in counted):
            lane.marks[index] = dataclasses.replace(mark, title=f"{mark.title} (not counted)", ok=False)


def usage_of(fields: Any) -> Usage:
    """A ``Usage`` from its logged fields (what an older or newer log lacks or adds is left out)."""
    if not isinstance(fields, dict):
        return Usage(0, 0)
    names = {item.name for item in dataclasses.fields(Usage)}
    return Usage(**{key: value for key, value in fields.items() if key in names})


def _origin(record: AttemptRecord) -> datetime | None:
    times = [moment(str(event.get("time", ""))) for event in record.events]
    known = [when for when in times if when is not None] + [request.time for request in record.requests]
    return min(known, default=None)


def _agents(record: AttemptRecord) -> list[str]:
    """The agents in registration order: their first events come in that order, as the attempt starts."""
    seen: dict[str, None] = {}
    for event in record.events:
        if isinstance(event.get("agent_id"), str):
            seen.setdefault(event["agent_id"], None)
    for agent_id in [*(record.summary or {}).get("usage", {}), *(r.agent_id for r in record.requests)]:
        seen.setdefault(agent_id, None)
    return list(seen)


def _steps(agent_id: str, record: AttemptRecord, clock: _Clock) -> list[Step]:
    """The agent's backend calls: each from its request to the agent's next usage report (a call reports
    what it spent as it ends, cancelled or not), streaming from its first text."""
    requests = sorted((r for r in record.requests if r.agent_id == agent_id), key=lambda r: r.number)
    usages = clock.usages(record.events, agent_id)
    texts = [
        clock(e) for e in record.events if e.get("type") == "AgentText" and e.get("agent_id") == agent_id
    ]
    statuses = [
        (clock(e), str(e.get("status")), str(e.get("detail", "")))
        for e in record.events
        if e.get("type") == "AgentStatus" and e.get("agent_id") == agent_id and e.get("status") in _DECISIONS
    ]
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
        decision = next((s for s in statuses if start <= s[0] < following), None)
        ended_by = (decision[2] or "restarted") if decision and decision[1] == "restarted" else ""
        steps.append(Step(request.number, request.purpose, start, end, streamed, usage, ended_by))
    return steps


class _Marks:
    """Turns events into marks on the lanes, and keeps the attempt's warnings and errors."""

    def __init__(self, clock: _Clock, lanes: dict[str, Lane], *, has_recall_events: bool):
        self.clock = clock
        self.lanes = lanes
        self.has_recall_events = has_recall_events
        self.tools_started: dict[str, tuple[float, dict[str, Any]]] = {}
        self.answers: list[tuple[float, str]] = []
        self.notices: list[str] = []

    def add(self, event: dict[str, Any]) -> None:
        handler = getattr(self, f"_{event.get('type')}", None)
        if handler is not None:
            handler(event, self.clock(event))

    def _put(self, agent_id: Any, mark: Mark) -> None:
        lane = self.lanes.get(str(agent_id))
        if lane is not None:
            lane.marks.append(mark)

    def _AgentStatus(self, event: dict[str, Any], at: float) -> None:
        agent_id, status, detail = event.get("agent_id"), event.get("status"), str(event.get("detail", ""))
        if status == "answered":
            self.answers.append((at, str(agent_id)))
            self._put(agent_id, Mark("answer", at, f"new answer: {_short(detail)}", (("answer", detail),)))
        elif status == "voted":
            target, _, reason = detail.partition(": ")
            details = (("vote for", target), ("reason", reason or "none given"))
            self._put(agent_id, Mark("vote", at, f"vote → {target}: {_short(reason)}", details))
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
            self._put(agent_id, Mark(str(status), at, f"{status}: {_short(detail)}", (("detail", detail),)))

    def _ToolStarted(self, event: dict[str, Any], at: float) -> None:
        self.tools_started[str(event.get("call_id"))] = (at, event)

    def _ToolFinished(self, event: dict[str, Any], at: float) -> None:
        started, call = self.tools_started.pop(str(event.get("call_id")), (at, {}))
        ok = bool(event.get("ok"))
        summary = str(event.get("summary", ""))
        details = (
            ("tool", str(event.get("name"))),
            ("arguments", json.dumps(call.get("arguments", {}), indent=1, ensure_ascii=False)),
            (
                "result",
                f"{'ok' if ok else 'failed'} · {event.get('seconds', 0)}s · {event.get('chars', 0)} chars",
            ),
            ("summary", summary),
        )
        title = f"{event.get('name')} {'✓' if ok else '✗'} {_short(summary)}"
        self._put(event.get("agent_id"), Mark("tool", started, title, details, until=at, ok=ok))

    def unfinished_tools(self) -> None:
        """Tool calls that never finished (their step was cancelled, or the process ended) are marked so."""
        for started, call in self.tools_started.values():
            details = (
                ("tool", str(call.get("name"))),
                ("arguments", json.dumps(call.get("arguments", {}), indent=1, ensure_ascii=False)),
                ("result", "none: the call did not finish"),
            )
            title = f"{call.get('name')} ✗ did not finish"
            self._put(call.get("agent_id"), Mark("tool", started, title, details, until=started, ok=False))
        self.tools_started.clear()

    def _FinalAnswer(self, event: dict[str, Any], at: float) -> None:
        text = str(event.get("text", ""))
        self._put(
            event.get("agent_id"), Mark("final", at, f"final answer: {_short(text)}", (("answer", text),))
        )

    def _MemoryRetrieved(self, event: dict[str, Any], at: float) -> None:
        memories = [item for item in event.get("memories") or [] if isinstance(item, dict)]
        details = [("reason", str(event.get("reason", ""))), ("query", str(event.get("query", "")))]
        for number, item in enumerate(memories, start=1):
            label = (
                f"#{number} · score {_score(item.get('score'))} · by {item.get('owner') or '?'}, "
                f"turn {item.get('turn', '?')}, session {item.get('session_id') or '?'}"
            )
            details.append((label, str(item.get("text", ""))))
        title = f"memory: {len(memories)} retrieved ({event.get('reason', 'lookup')})"
        self._put(event.get("agent_id"), Mark("recall", at, title, tuple(details)))

    def _MemoryRecorded(self, event: dict[str, Any], at: float) -> None:
        records = [item for item in event.get("records") or [] if isinstance(item, dict)]
        details = tuple(
            (
                f"{item.get('key') or item.get('memory_id')} ({'new' if item.get('new') else 'seen before'})",
                str(item.get("text", "")),
            )
            for item in records
        )
        self._put(event.get("agent_id"), Mark("record", at, f"memory: {len(records)} recorded", details))

    def _Notice(self, event: dict[str, Any], at: float) -> None:
        message = str(event.get("message", ""))
        if compressed := _COMPRESSED.match(message):
            text = compressed.group("text")
            mark = Mark("compression", at, f"compressed: {_short(text)}", (("compression", text),))
            self._put(compressed.group("agent"), mark)
        elif (retrieved := _RETRIEVED_NOTICE.match(message)) and not self.has_recall_events:
            note = "this log predates the record of what was retrieved; only the count is known"
            title = f"memory: {retrieved.group('count')} retrieved"
            self._put(retrieved.group("agent"), Mark("recall", at, title, (("note", note),)))
        if event.get("level") in _SHOWN_NOTICES:
            self.notices.append(f"{event.get('level')}: {message}")


def _short(text: str) -> str:
    return one_line(text, TITLE_CHARS)


def _score(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "?"

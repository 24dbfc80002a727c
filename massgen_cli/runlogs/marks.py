"""What an attempt's story is made of, agent by agent: each agent's lane, its steps (backend calls) and the
marks along them, and how the logged events become those marks (``Marks``): hook decisions and subagent
runs (from start to end, on the lane of the agent that handed it its task) included."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from massgen_cli.events import (
    AgentStatus,
    CommandRan,
    FinalAnswer,
    MemoryRecorded,
    MemoryRetrieved,
    Notice,
    RunEvent,
    SteeringMessage,
    ToolFinished,
    ToolStarted,
    Usage,
    VoteCast,
)
from massgen_cli.feature_events import HookDecided, SubagentFinished, SubagentStarted
from massgen_cli.text import one_line

UNREAD = "(came after the last step began: no agent read it)"
"""How a steering message no step carried is marked in the story."""

TITLE_CHARS = 90
_COMPRESSED = re.compile(r"^📦 \[(?P<agent>[^\]]+)\] (?P<text>.*)", re.S)
_RETRIEVED_NOTICE = re.compile(r"^✅ Total: (?P<count>\d+) memories retrieved for (?P<agent>\S+)$")
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
    ``done``, ``failed``, ``hook``, ``subagent``; ``details`` are (label, text) pairs, the content shown
    on demand; ``cause`` the agent and time of the new answer that restarted the agent (restarts only);
    ``vote`` the vote (votes only)."""

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


class Marks:
    """Turns events into marks on the lanes, and keeps the attempt's warnings and errors and the messages
    a person sent it (``steering``: when each reached the agents, and its text)."""

    def __init__(self, lanes: dict[str, Lane], *, has_recall_events: bool):
        self.lanes = lanes
        self.has_recall_events = has_recall_events
        self.tools_started: dict[str, tuple[float, ToolStarted]] = {}
        self.commands: dict[str, CommandRan] = {}
        """The commands of the tool calls under way, told just before their calls' ends."""
        self.answers: list[tuple[float, str]] = []
        self.notices: list[str] = []
        self.steering: list[tuple[float, str]] = []
        self.turn_hooks: list[tuple[float, str]] = []
        """What the turn's own hooks decided (their events name no agent)."""
        self.subagents = SubagentMarks()

    def add(self, event: RunEvent, at: float) -> None:
        if isinstance(event, AgentStatus):
            self._status(event, at)
        elif isinstance(event, VoteCast):
            self._vote(event, at)
        elif isinstance(event, ToolStarted):
            self.tools_started[event.call_id] = (at, event)
        elif isinstance(event, CommandRan):
            self.commands[event.call_id] = event
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
        elif isinstance(event, SteeringMessage):
            self.steering.append((at, event.text if event.read else f"{event.text} {UNREAD}"))
        else:
            self._feature(event, at)

    def _feature(self, event: RunEvent, at: float) -> None:
        """A hook's decision, a subagent's start or end."""
        if isinstance(event, HookDecided) and not event.agent_id:
            self.turn_hooks.append((at, hook_title(event)))
        elif isinstance(event, HookDecided):
            self._put(event.agent_id, hook_mark(event, at))
        elif isinstance(event, SubagentStarted):
            self.subagents.start(event, at)
        elif isinstance(event, SubagentFinished):
            self._put(event.agent_id, self.subagents.finish(event, at))

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
        command = self.commands.pop(event.call_id, None)
        details = (
            ("tool", event.name),
            *((("command", command.describe()),) if command is not None else ()),
            ("arguments", json.dumps(arguments, indent=1, ensure_ascii=False)),
            ("result", f"{'ok' if event.ok else 'failed'} · {event.seconds}s · {event.chars} chars"),
            ("summary", event.summary),
        )
        title = f"{event.name} {'✓' if event.ok else '✗'} {_short(event.summary)}"
        if command is not None:  # a command says itself and how it ended, as the console does
            title = command.describe(TITLE_CHARS)
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


HOOK_VERBS = {
    "allow": "allowed",
    "deny": "denied",
    "rewrite": "rewritten",
    "add": "added to",
    "replace": "replaced",
    "heard": "heard",
    "failed": "not decided (the hook failed)",
}


def hook_title(event: HookDecided) -> str:
    """``execute_command denied by hook check.py: why`` (a turn hook: ``turn_start heard by hook …``)."""
    what = event.tool or event.point
    reason = f": {event.reason}" if event.reason else ""
    return f"{what} {HOOK_VERBS[event.decision]} by hook {event.hook}{reason}"


def hook_mark(event: HookDecided, at: float) -> Mark:
    details = (
        ("hook", event.hook),
        ("point", event.point),
        ("decision", event.decision),
        ("reason", event.reason or "none given"),
        ("took", f"{event.seconds}s"),
    )
    return Mark("hook", at, one_line(hook_title(event), TITLE_CHARS), details, ok=event.decision != "failed")


@dataclass
class SubagentMarks:
    """Subagent runs as marks: each start kept until its end comes."""

    started: dict[str, tuple[float, SubagentStarted]] = field(default_factory=dict)

    def start(self, event: SubagentStarted, at: float) -> None:
        self.started[event.subagent_id] = (at, event)

    def finish(self, event: SubagentFinished, at: float) -> Mark:
        began, start = self.started.pop(event.subagent_id, (at, None))
        spent = Usage(event.input_tokens, event.output_tokens, cost_usd=event.cost_usd)
        details = (
            ("task", start.task if start is not None else "?"),
            ("status", event.status + (f" ({event.reason})" if event.reason else "")),
            ("answer", event.answer or "none"),
            ("spent", f"{spent.describe()} · {event.seconds}s"),
            ("workspace", event.workspace),
            ("log", event.log_folder or "none"),
        )
        title = one_line(f"subagent {event.subagent_id} {event.status}: {event.answer}", TITLE_CHARS)
        return Mark("subagent", began, title, details, until=at, ok=event.status == "completed")

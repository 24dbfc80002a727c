"""Runs told as text: one line per run (``massgen logs list``) and a readable account of each turn
(``massgen logs show``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from massgen_cli.events import AgentUsage, Usage
from massgen_cli.runlogs.marks import Lane, Mark
from massgen_cli.runlogs.reader import AttemptRecord, Run
from massgen_cli.runlogs.story import AttemptStory, tell, usage_of
from massgen_cli.text import one_line, printable
from massgen_cli.ui import cost_text

QUESTION_CHARS = 60
TEXT_CHARS = 160
MEMORY_LINES = 4
"""The most lines of one lookup or recording in the account (its query and memories)."""
_STATUS_ORDER = ("unfinished", "failed", "cancelled", "answered")


@dataclass(frozen=True)
class RunLine:
    """What ``logs list`` says of a run."""

    run: str
    path: str
    session_id: str | None
    turns: list[int]
    question: str
    winner: str | None
    status: str
    usage: Usage

    def text(self) -> str:
        """The run's line, with no control character a log could carry to the terminal."""
        turns = f"{len(self.turns)} turn{'s' if len(self.turns) != 1 else ''}"
        columns = [
            self.run,
            f"{self.session_id or '?':<30}",
            f"{turns:<7}",
            f"{self.status:<10}",
            f"{self.winner or '-':<12}",
            f"{self.usage.tokens:>9,} tokens",
            f"{cost_text(self.usage.cost_usd):<9}",
            one_line(self.question.splitlines()[0] if self.question else "", QUESTION_CHARS),
        ]
        return printable("  ".join(columns))

    def record(self) -> dict[str, Any]:
        """Its fields, the usage as ``Usage.fields`` gives it."""
        return asdict(self) | {"usage": self.usage.fields()}


def run_line(run: Run) -> RunLine:
    """The run's turns from their summaries: its first question, last winner, what it spent, and the worst
    way a turn ended (every turn answered: ``answered``)."""
    turns = run.turns
    statuses = [record.status for record in turns]
    status = min(statuses, key=_STATUS_ORDER.index, default="unfinished")
    spent = [turn_spent(run, record) for record in turns]
    winners = [str(winner) for record in turns if (winner := (record.summary or {}).get("winner"))]
    return RunLine(
        run.name,
        str(run.folder),
        run.session_id,
        [record.turn for record in turns],
        next((record.question for record in turns if record.question), ""),
        winners[-1] if winners else None,
        status,
        Usage.total(spent),
    )


def turn_spent(run: Run, last: AttemptRecord) -> Usage:
    """What the turn whose last attempt is ``last`` spent: its summary's ``turn_usage``; for a turn cut off
    before its summary was written (a killed process), what its events tell, as the report counts it."""
    if last.summary is not None and "turn_usage" in last.summary:
        return usage_of(last.summary["turn_usage"])
    attempts = [record for record in run.attempts if record.turn == last.turn]
    return Usage.total(
        logged.event.usage
        for record in attempts
        for logged in record.events
        if isinstance(logged.event, AgentUsage)
    )


def account(runs: list[Run]) -> Iterator[str]:
    """The lines of ``logs show``: each run, each attempt of each turn, with no control character a log
    could carry to the terminal (an answer may hold escape sequences that clear it or retitle it)."""
    return (printable(line) for line in _told(runs))


def _told(runs: list[Run]) -> Iterator[str]:
    for run in runs:
        stories = [tell(record) for record in run.attempts]
        spent = Usage.total(story.usage for story in stories).describe()
        yield f"Run {run.name} · session {run.session_id or '?'} · {len(run.turns)} turn(s) · {spent}"
        yield f"  {run.folder}"
        for story in stories:
            yield ""
            yield from _attempt(story)
        yield ""


def _attempt(story: AttemptStory) -> Iterator[str]:
    record = story.record
    took = f"{story.duration:.2f}s · {story.usage.describe()}"
    yield f"Turn {record.turn} · attempt {record.attempt} · {record.status} · {took}"
    yield f"  question: {one_line(record.question, TEXT_CHARS) or '?'}"
    yield f"  {story.verdict()}"
    yield from _steering(story)
    yield from _section("answers", [(lane, mark) for lane in story.lanes for mark in lane.of("answer")])
    yield from _section("votes", [(lane, mark) for lane in story.lanes for mark in lane.of("vote")])
    yield from _section("restarts", [(lane, mark) for lane in story.lanes for mark in lane.of("restart")])
    yield from _section("tools", [(lane, mark) for lane in story.lanes for mark in lane.of("tool")])
    yield from _hooks(story)
    yield from _section("subagents", [(lane, mark) for lane in story.lanes for mark in lane.of("subagent")])
    yield from _memory(story)
    yield from _section("compressions", [(lane, m) for lane in story.lanes for m in lane.of("compression")])
    yield "  per agent"
    for lane in story.lanes:
        yield f"    {lane.agent_id}: {_spent(lane)}"
    final = (story.summary.get("final_answer") or "").strip()
    if final:
        yield f"  final answer ({story.winner}): {one_line(final, TEXT_CHARS)}"
    for notice in story.notices:
        yield f"  {one_line(notice, TEXT_CHARS)}"


def _section(title: str, marks: list[tuple[Lane, Mark]]) -> Iterator[str]:
    if not marks:
        return
    yield f"  {title}"
    for lane, mark in sorted(marks, key=lambda pair: pair[1].at):
        yield f"    {mark.at:7.2f}s  {lane.agent_id}: {one_line(_plain(mark), TEXT_CHARS)}"


def _hooks(story: AttemptStory) -> Iterator[str]:
    """Each hook decision: the agents' tool hooks and the turn's own, in order."""
    said = [(mark.at, f"{lane.agent_id}: {mark.title}") for lane in story.lanes for mark in lane.of("hook")]
    said += [(at, f"turn: {text}") for at, text in story.turn_hooks]
    if said:
        yield "  hooks"
    for at, text in sorted(said):
        yield f"    {at:7.2f}s  {one_line(text, TEXT_CHARS)}"


def _steering(story: AttemptStory) -> Iterator[str]:
    if not story.steering:
        return
    yield "  sent during the run"
    for at, text in story.steering:
        yield f"    {at:7.2f}s  you: {one_line(text, TEXT_CHARS)}"


def _plain(mark: Mark) -> str:
    """A mark's title, with the whole of its answer or reason where the title cut it."""
    if mark.kind == "answer":
        return f"new answer: {mark.details[0][1]}"
    return mark.title


def _memory(story: AttemptStory) -> Iterator[str]:
    marks = sorted(
        ((lane, mark) for lane in story.lanes for mark in lane.of("recall", "record")), key=lambda p: p[1].at
    )
    if not marks:
        return
    yield "  memory"
    for lane, mark in marks:
        yield f"    {mark.at:7.2f}s  {lane.agent_id}: {mark.title}"
        shown = [(label, text) for label, text in mark.details if label not in ("reason", "note")]
        for label, text in shown[:MEMORY_LINES]:
            yield f"             {label}: {one_line(text, TEXT_CHARS)}"
        if len(shown) > MEMORY_LINES:
            yield f"             … {len(shown) - MEMORY_LINES} more (`massgen logs report` shows them all)"


def _spent(lane: Lane) -> str:
    calls, failed = lane.tool_calls
    tools = f"{calls} tool call(s)" + (f", {failed} failed" if failed else "")
    return f"{len(lane.steps)} step(s) · {lane.usage.describe()} · {lane.busy_seconds:.2f}s busy · {tools}"

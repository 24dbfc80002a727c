"""Rendering run events: a Rich live view (stderr on a terminal) or plain lines; the answer on stdout.

The final answer is the only thing written to stdout; everything else goes to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from massgen_cli.answer_out import AnswerOut
from massgen_cli.event_lines import feature_notice, memory_said
from massgen_cli.events import (
    AgentStatus,
    AgentText,
    AgentUsage,
    BreakerChanged,
    CommandOutput,
    CommandRan,
    FinalAnswer,
    MemoryRecorded,
    MemoryRetrieved,
    Notice,
    RateLimitWait,
    RunEvent,
    ToolFinished,
    TurnEnded,
    Usage,
    VoteCast,
)
from massgen_cli.stderr_console import StderrConsole, escape, rich_console
from massgen_cli.text import one_line

if TYPE_CHECKING:  # Rich loads when something is printed; the live view's parts when one is drawn
    from rich.console import Console, Group
    from rich.live import Live

TAIL_CHARS = 600
DETAIL_CHARS = 120
SHOWN_COMMAND_CHARS = 200  # of a command line on the console (the logs keep 500)
PRINTED_OUTPUT_LINES = 20
"""The most lines of a running command's output printed without a live view (its result has them all)."""
STATUS_STYLE = {
    "working": "cyan",
    "answered": "green",
    "voted": "magenta",
    "restarted": "yellow",
    "failed": "red",
}


class ConsoleView:
    """Turns events into output; it alone writes to ``out`` (stdout): the final answer, streamed as it
    comes when its request is the final answer's, and whatever part of it was not streamed when the turn's
    ``FinalAnswer`` arrives. ``live`` uses a Rich live view on the console; ``quiet`` shows only the answer.
    """

    def __init__(
        self,
        agent_ids: Sequence[str],
        *,
        console: Console | StderrConsole,
        out: TextIO | None = None,
        live: bool = False,
        quiet: bool = False,
        debug: bool = False,
    ):
        self.out = out or sys.stdout
        self.quiet = quiet
        use_live = live and not quiet
        self.panels = _Panels(agent_ids, console, live=use_live)
        self.lines = _Lines(console, quiet=quiet, debug=debug, per_agent=not use_live and not quiet)
        self.answer = AnswerOut(self.out)
        self.commands: set[str] = set()  # calls whose command had its own line: no tool line again
        self.held: list[Notice] = []
        """Notices said while the answer streams on the terminal, said once its line ends."""

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, AgentText):
            self._text(event)
        elif isinstance(event, AgentStatus | VoteCast):
            self.panels.state(event)
            self._refresh()
            self.lines.state(event)
        elif isinstance(event, Notice):
            self._notice(event)
        elif isinstance(event, RateLimitWait | BreakerChanged):
            self._notice(Notice("info" if isinstance(event, RateLimitWait) else "warning", event.describe()))
        elif isinstance(event, MemoryRetrieved | MemoryRecorded):  # what memory did, for --debug
            self._notice(Notice("debug", memory_said(event)))
        elif isinstance(event, CommandOutput):
            self.panels.running[event.agent_id] = event
            self._refresh()
            self.lines.command_output(event)
        elif isinstance(event, CommandRan):
            self.panels.running.pop(event.agent_id, None)
            self.commands.add(event.call_id)
            self.lines.command(event)
        elif isinstance(event, ToolFinished):
            self._tool(event)
        elif isinstance(event, FinalAnswer):
            self._final_answer(event)
        elif isinstance(event, AgentUsage):
            self.panels.spend(event.agent_id, event.usage)
            self._refresh()
        elif isinstance(event, TurnEnded):
            self._turn_ended(event)
        elif (said := feature_notice(event)) is not None:  # hooks, subagents, plans, checklists
            self._notice(said)

    def begin_turn(self) -> None:
        """Reset per-turn state; the live view starts with the first event."""
        self.answer = AnswerOut(self.out)
        self.panels.reset()

    def end_turn(self) -> None:
        self.panels.close()

    def log_folder(self, folder: Path) -> None:
        """The run's last line: where its log went, and the command that draws its report."""
        self.lines.log_folder(folder)

    @contextmanager
    def answer_on_console(self) -> Iterator[None]:
        """The final answers of the turns run inside go to the console, not to stdout (a plan made
        before its execution, whose answer stdout gets)."""
        out, self.out = self.out, self.lines.console.file
        try:
            yield
        finally:
            self.out = out

    def cancel_turn(self) -> None:
        """A cancelled turn: end the partly streamed answer's line so the next answer starts clean."""
        self.panels.close()
        self.answer.end_line()
        self._say_held()

    def _notice(self, event: Notice) -> None:
        if self.answer.line_open:  # not glued to the answer streaming on the same terminal
            self.held.append(event)
            return
        self.lines.notice(event)

    def _say_held(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self.lines.notice(event)

    def _text(self, event: AgentText) -> None:
        if event.kind != "presentation":
            self.panels.append(event.agent_id, event.text)
            self._refresh()
            return
        if not self.answer.started:
            self._begin_answer(event.agent_id, heading=len(self.panels.status) > 1)
        self.answer.stream(event.text)

    def _final_answer(self, event: FinalAnswer) -> None:
        """The turn's answer: what was not streamed of it is written now, on its own line(s)."""
        if not self.answer.started:
            self._begin_answer(event.agent_id, heading=True)
        self.answer.finish(event.text)
        self._say_held()

    def _begin_answer(self, agent_id: str, *, heading: bool) -> None:
        """The live view draws its last frame once and stays closed for the rest of the turn."""
        self.panels.close()
        self.answer.started = True
        if heading:
            self.lines.heading(agent_id)

    def _tool(self, event: ToolFinished) -> None:
        """One line per tool call: in the agent's panel, or printed without the live view."""
        mark = "✓" if event.ok else "✗"
        line = f"🔧 {event.name} {mark} {one_line(event.summary, DETAIL_CHARS)} ({event.seconds:.2f}s)"
        self.panels.append(event.agent_id, "\n" + line + "\n")
        self._refresh()
        if event.call_id in self.commands:
            self.commands.discard(event.call_id)
        else:
            self.lines.tool(event, line)

    def _turn_ended(self, event: TurnEnded) -> None:
        self.panels.close()
        self.answer.end_line()
        self._say_held()
        self.lines.turn_ended(event)

    def _refresh(self) -> None:
        if not self.answer.started:  # once the answer is out, no panel is drawn again
            self.panels.draw()


class _Panels:
    """The live view: a panel per agent with its state, the tail of what it wrote and what it spent. The
    state is kept with or without a live view; only a live view draws it."""

    def __init__(self, agent_ids: Sequence[str], console: Console | StderrConsole, *, live: bool):
        self.console = console
        self.enabled = live
        self.status = {agent_id: "waiting" for agent_id in agent_ids}
        self.text = {agent_id: "" for agent_id in agent_ids}
        self.answers: dict[str, str] = {}
        self.spent = {agent_id: Usage(0, 0) for agent_id in agent_ids}
        self.running: dict[str, CommandOutput] = {}
        """Each agent's running command, with its last lines."""
        self.live: Live | None = None

    def reset(self) -> None:
        self.answers.clear()
        self.status = dict.fromkeys(self.status, "waiting")
        self.text = dict.fromkeys(self.text, "")
        self.spent = dict.fromkeys(self.spent, Usage(0, 0))

    def append(self, agent_id: str, text: str) -> None:
        self.text[agent_id] = (self.text[agent_id] + text)[-TAIL_CHARS:]

    def spend(self, agent_id: str, usage: Usage) -> None:
        self.spent[agent_id] = self.spent.get(agent_id, Usage(0, 0)) + usage

    def state(self, event: AgentStatus | VoteCast) -> None:
        """The agent's panel after a change of state: its answer once it has one, then its vote; a restart
        clears it; ``done`` and ``failed`` say why under what it wrote."""
        if isinstance(event, VoteCast):
            self.status[event.voter] = "voted"
            vote = f"vote → {event.target}: {event.reason}"
            self.text[event.voter] = f"{self.answers.get(event.voter, '')}\n{vote}".strip()
            return
        agent_id = event.agent_id
        self.status[agent_id] = event.status
        if event.status == "answered":
            self.answers[agent_id] = f"answer: {event.detail}"
            self.text[agent_id] = self.answers[agent_id]
        elif event.status == "restarted":
            self.text[agent_id] = ""
        elif event.status in ("done", "failed"):
            self.text[agent_id] += f"\n[{event.status}] {event.detail}"

    def draw(self) -> None:
        if not self.enabled:
            return
        if self.live is None:
            from rich.live import Live

            console = rich_console(self.console)
            self.live = Live(self._render(), console=console, refresh_per_second=8, transient=False)
            self.live.start()
        else:
            self.live.update(self._render())

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _render(self) -> Group:
        from rich.console import Group
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        table = Table.grid(expand=True, padding=(0, 1))
        for _ in self.status:
            table.add_column(ratio=1)
        panels = [
            Panel(
                Text(self._shown(agent_id), overflow="fold"),
                title=f"{agent_id} · {status}",
                subtitle=self.spent[agent_id].describe()
                if self.spent.get(agent_id, Usage(0, 0)).tokens
                else None,
                border_style=STATUS_STYLE.get(status, "white"),
                height=12,
            )
            for agent_id, status in self.status.items()
        ]
        table.add_row(*panels)
        return Group(table)

    def _shown(self, agent_id: str) -> str:
        """The tail of what the agent wrote, or its running command with its last lines."""
        running = self.running.get(agent_id)
        if running is None:
            return self.text[agent_id][-TAIL_CHARS:] or "…"
        output = [*running.lines, running.unfinished] if running.unfinished else list(running.lines)
        return "\n".join([f"$ {one_line(running.command, DETAIL_CHARS)}", *output[-6:]])


class _Lines:
    """The lines printed on the console: notices, the answer's heading, the end of a turn, the log folder;
    and, without a live view (``per_agent``), a line per change of an agent's state and per tool call."""

    def __init__(self, console: Console | StderrConsole, *, quiet: bool, debug: bool, per_agent: bool):
        self.console = console
        self.quiet = quiet
        self.debug = debug
        self.per_agent = per_agent
        self.printed: dict[str, int] = {}
        """How many lines of each running command (by call id) were printed."""

    def state(self, event: AgentStatus | VoteCast) -> None:
        if isinstance(event, VoteCast):
            agent_id, status, detail = event.voter, "voted", f"{event.target}: {event.reason}"
        else:
            agent_id, status, detail = event.agent_id, event.status, event.detail
        if not self.per_agent or status == "working":
            return
        said = f": {one_line(detail, DETAIL_CHARS)}" if detail else ""
        style = STATUS_STYLE.get(status, "white")
        self.console.print(f"[{style}]{escape(f'[{agent_id}]')} {status}[/]{escape(said)}")

    def tool(self, event: ToolFinished, line: str) -> None:
        if self.per_agent:
            style = "dim" if event.ok else "yellow"
            self.console.print(
                f"[{style}]{escape(f'[{event.agent_id}]')} {escape(one_line(line, DETAIL_CHARS))}[/]"
            )

    def command_output(self, event: CommandOutput) -> None:
        """A running command (without a live view): its command line when it starts, then the lines it
        finished since the last ones printed, up to ``PRINTED_OUTPUT_LINES`` in all."""
        if not self.per_agent:
            return
        who = escape(f"[{event.agent_id}]")
        if event.call_id not in self.printed:
            self.printed[event.call_id] = 0
            said = escape(f"$ {one_line(event.command, SHOWN_COMMAND_CHARS)}")
            self.console.print(f"[dim]{who} {said} …[/]")
        printed = self.printed[event.call_id]
        if printed >= PRINTED_OUTPUT_LINES or event.finished_lines <= printed:
            return
        new = event.finished_lines - printed
        fresh = list(event.lines[-new:])
        if new > len(fresh):
            fresh.insert(0, f"[… {new - len(fresh)} line(s)]")
        for line in fresh[: PRINTED_OUTPUT_LINES - printed]:
            self.console.print(f"[dim]{who} │ {escape(line)}[/]", soft_wrap=True)
        self.printed[event.call_id] = event.finished_lines
        if event.finished_lines >= PRINTED_OUTPUT_LINES:
            self.console.print(f"[dim]{who} │ … (the rest is in the command's result)[/]")

    def command(self, event: CommandRan) -> None:
        """A command an agent ran, on a line of its own, with or without the live view."""
        if not self.quiet:
            style = "dim" if event.exit_code == 0 else "yellow"
            said = f"{event.describe(SHOWN_COMMAND_CHARS)} ({event.seconds:.2f}s)"
            self.console.print(f"[{style}]{escape(f'[{event.agent_id}]')} {escape(said)}[/]")

    def notice(self, event: Notice) -> None:
        shown_when_quiet = ("error", "degraded")  # what changes what the run does is always said
        if (self.quiet and event.level not in shown_when_quiet) or (
            event.level == "debug" and not self.debug
        ):
            return
        style = {"warning": "yellow", "degraded": "yellow", "error": "bold red"}.get(event.level, "dim")
        self.console.print(f"[{style}]{escape(event.message)}[/]")

    def heading(self, agent_id: str) -> None:
        if not self.quiet:
            self.console.print(f"[bold green]Final answer[/] by [bold]{escape(agent_id)}[/]")

    def turn_ended(self, event: TurnEnded) -> None:
        if self.quiet:
            return
        if event.votes:
            counts = " · ".join(f"{agent_id} {count}" for agent_id, count in sorted(event.votes.items()))
            self.console.print(f"Votes: {escape(counts)} — winner [bold]{escape(event.winner or 'none')}[/]")
        spent = Usage.total(event.usage.values())
        self.console.print(f"[dim]Turn {event.turn} ended: {escape(event.reason)} · {spent.describe()}[/]")

    def log_folder(self, folder: Path) -> None:
        """The run's last line: where its log went, and the command that draws its report."""
        if not self.quiet:
            line = f"log: {folder} (massgen logs report {folder.name})"
            self.console.print(f"[dim]{escape(line)}[/]")


def cost_text(cost_usd: float | None) -> str:
    """A cost as every view shows it: ``free`` when nothing was spent, ``$0.0031``, or ``unknown`` when a
    model has no known price."""
    if cost_usd is None:
        return "unknown"
    return "free" if cost_usd == 0 else f"${cost_usd:.4f}"

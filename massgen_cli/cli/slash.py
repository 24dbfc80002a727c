"""The commands of an interactive session, with MassGen's names and short forms: what the session has
spent, the latest turn's answers and log, each agent's context use, the config in use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from massgen_cli.events import ContextStatus, RunEvent, Usage
from massgen_cli.session import SessionRecord
from massgen_cli.text import one_line, printable
from massgen_cli.ui import cost_text

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp
    from massgen_cli.coordination.outcome import TurnResult

QUESTION_CHARS = 60


@dataclass(frozen=True)
class Command:
    """One command: its names (the first is shown), what it takes, what it does, and its handler (which
    returns True to leave the session)."""

    names: tuple[str, ...]
    usage: str
    help: str
    run: Callable[[ChatCommands, str], bool]


class ChatCommands:
    """The slash commands of one interactive session. It hears the run's events (each agent's latest
    context measure) and is told each turn's result (``latest``)."""

    def __init__(self, app: MassGenApp, console: Console):
        self.app = app
        self.console = console
        self.latest: TurnResult | None = None
        self.context: dict[str, ContextStatus] = {}
        app.events.subscribe(self._hear)

    def _hear(self, event: RunEvent) -> None:
        if isinstance(event, ContextStatus):
            self.context[event.agent_id] = event

    def run(self, line: str) -> bool:
        """Do the command ``line`` names; True means leave the session."""
        name, _, argument = line.strip().partition(" ")
        command = BY_NAME.get(name.lower())
        if command is None:
            self.say(f"unknown command {escape(name)}; /help lists the commands")
            return False
        return command.run(self, argument.strip())

    def say(self, markup: str) -> None:
        self.console.print(markup)


def _quit(chat: ChatCommands, argument: str) -> bool:
    return True


def _help(chat: ChatCommands, argument: str) -> bool:
    width = max(len(_names(command)) for command in COMMANDS)
    lines = [f"  {_names(command):<{width}}  {command.help}" for command in COMMANDS]
    chat.say(
        "Commands:\n" + escape("\n".join(lines)) + "\n[dim]Ctrl-C cancels a running turn; Ctrl-D leaves.[/]"
    )
    return False


def _names(command: Command) -> str:
    return ", ".join(command.names) + (f" {command.usage}" if command.usage else "")


def _status(chat: ChatCommands, argument: str) -> bool:
    app = chat.app
    agents = ", ".join(f"{a.id} ({a.backend.name}:{a.backend.model})" for a in app.agents)
    chat.say(escape(f"session {app.session.id} · next turn {app.session.next_turn} · agents: {agents}"))
    return False


def _reset(chat: ChatCommands, argument: str) -> bool:
    chat.app.reset()
    chat.say("conversation forgotten; the turn counter goes on")
    return False


def _cost(chat: ChatCommands, argument: str) -> bool:
    """What the session's answered turns spent, as ``massgen sessions show`` lists them."""
    record = chat.app.session.record
    table, spent = spending_table(record)
    if not record.exchanges:
        chat.say(f"session {escape(record.session_id)}: no answered turn yet, nothing spent")
        return False
    chat.console.print(table)
    chat.say(f"Total: {Usage.total(spent).describe()}" if spent else "no costs recorded for these turns")
    if chat.latest is not None and chat.latest.usage:
        usage = chat.latest.usage
        in_config_order = [agent.id for agent in chat.app.agents if agent.id in usage]
        split = "; ".join(f"{agent} {usage[agent].describe()}" for agent in in_config_order)
        chat.say(f"[dim]turn {chat.latest.turn} by agent: {escape(split)}[/]")
    return False


def spending_table(record: SessionRecord) -> tuple[Table, list[Usage]]:
    """Every turn of the session with how it ended (``offline``: taken while the memory server could not
    be reached), its winner, tokens and cost (a ``/reset`` marked where a new conversation began), and
    each turn's usage (turns recorded before costs were kept have
    none)."""
    table = Table(title=f"Session {record.session_id}")
    for column in ("turn", "question", "status", "winner", "tokens", "cost"):
        table.add_column(column, justify="right" if column in ("turn", "tokens", "cost") else "left")
    spent, conversation = [], record.exchanges[0].conversation if record.exchanges else 1
    for exchange in record.exchanges:
        if exchange.conversation != conversation:
            conversation = exchange.conversation
            table.add_row("", "── /reset: a new conversation ──", "", "", "", "")
        usage = Usage(**exchange.usage) if exchange.usage else None
        spent += [usage] if usage else []
        table.add_row(
            str(exchange.turn),
            escape(one_line(exchange.question, QUESTION_CHARS)),
            exchange.status + (" (offline)" if exchange.offline else ""),
            escape(exchange.winner or ""),
            f"{usage.tokens:,}" if usage else "",
            cost_text(usage.cost_usd) if usage else "",
        )
    return table, spent


def _answers(chat: ChatCommands, argument: str) -> bool:
    """The latest turn's answer of each agent, its votes and its winner."""
    latest = chat.latest
    if latest is None:
        chat.say("no turn in this session yet; ask a question first")
        return False
    chat.say(f"[bold]Turn {latest.turn}[/] · {escape(one_line(latest.question, QUESTION_CHARS))}")
    if not latest.answers:
        chat.say(f"no agent answered: {escape(latest.end_reason)}")
    for agent_id, text in latest.answers.items():
        mark = " [bold green](winner)[/]" if agent_id == latest.winner else ""
        chat.say(f"[bold]{escape(agent_id)}[/]{mark}:\n{escape(printable(text))}")
    for vote in latest.votes:
        reason = f": {one_line(vote.reason, QUESTION_CHARS)}" if vote.reason else ""
        chat.say(escape(f"vote {vote.voter} → {vote.target}{reason}"))
    chat.say(f"winner: [bold]{escape(latest.winner or 'none')}[/] · {escape(latest.end_reason)}")
    return False


def _context(chat: ChatCommands, argument: str) -> bool:
    """Each agent's latest request against its model's window, and where compression starts."""
    for agent in chat.app.agents:
        guard = agent.guard
        if guard is None:
            chat.say(f"{escape(agent.id)}: not measured (no context window known)")
            continue
        monitor, seen = guard.monitor, chat.context.get(agent.id)
        trigger = f"compresses past {monitor.trigger_tokens:,} ({monitor.trigger_threshold:.0%})"
        if seen is None:
            chat.say(escape(f"{agent.id}: no request yet · window {monitor.window:,} tokens · {trigger}"))
            continue
        about = "~" if seen.estimated else ""
        share = seen.tokens / seen.window if seen.window else 1.0
        chat.say(
            escape(
                f"{agent.id}: {about}{seen.tokens:,} / {seen.window:,} tokens ({share:.0%}) in its latest "
                f"request (turn {seen.turn}) · {trigger}"
            )
        )
    return False


def _config(chat: ChatCommands, argument: str) -> bool:
    """The config file in use and what each agent runs on (the backend's own model where the config
    names none)."""
    loaded = chat.app.loaded
    chat.say(f"config: {escape(str(loaded.path))}")
    for configured, agent in zip(loaded.config.agents, chat.app.agents, strict=True):
        backend = configured.backend
        where = f" at {backend.base_url}" if backend.base_url else ""
        model = backend.model or agent.backend.model
        chat.say(escape(f"  {agent.id}: {backend.type} · model {model}{where}"))
    chat.say(f"[dim]massgen --validate {escape(str(loaded.path))} lists its warnings and notes[/]")
    return False


def _inspect(chat: ChatCommands, argument: str) -> bool:
    """The log folder of the latest turn (or turn ARGUMENT) of this run, what each attempt holds, and the
    commands that read it."""
    log = chat.app.run_log
    if not log.written:
        chat.say(
            "this run has written no log yet" if log.enabled else "this run keeps no log (logging is off)"
        )
        return False
    turns = sorted(int(p.name[5:]) for p in log.directory.glob("turn_*") if p.name[5:].isdigit())
    if argument and not argument.isdigit():
        chat.say("usage: /inspect [TURN]")
        return False
    turn = int(argument) if argument else turns[-1]
    if turn not in turns:
        chat.say(escape(f"no turn {turn} in this run's log; it has turn(s) {', '.join(map(str, turns))}"))
        return False
    folder = log.directory / f"turn_{turn}"
    chat.say(escape(f"turn {turn}: {folder}"))
    for attempt in sorted(folder.iterdir()):
        chat.say(escape(f"  {attempt.name}/: {_contents(attempt)}"))
    name = log.directory.name
    chat.say(f"[dim]massgen logs show {name} tells what happened; massgen logs report {name} draws it[/]")
    return False


def _contents(folder: Path) -> str:
    """``summary.json, events.jsonl (12 events), requests/ (4 files)``: what an attempt folder holds."""
    parts = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            parts.append(f"{entry.name}/ ({sum(1 for _ in entry.iterdir())} files)")
        elif entry.name == "events.jsonl":
            with entry.open("rb") as file:
                parts.append(f"{entry.name} ({sum(1 for _ in file)} events)")
        else:
            parts.append(entry.name)
    return ", ".join(parts) or "empty"


COMMANDS = (
    Command(("/help", "/h"), "", "this list", _help),
    Command(("/status",), "", "the session, its next turn and its agents", _status),
    Command(("/cost", "/c"), "", "tokens and cost of the session's answered turns", _cost),
    Command(("/answers", "/b"), "", "the latest turn's answers, votes and winner", _answers),
    Command(("/context",), "", "each agent's context use against its model's window", _context),
    Command(("/config",), "", "the config file in use and each agent's backend and model", _config),
    Command(("/inspect", "/i"), "[TURN]", "the latest turn's log folder and what it holds", _inspect),
    Command(("/reset", "/clear"), "", "forget the conversation (the turn counter goes on)", _reset),
    Command(("/quit", "/exit", "/q"), "", "leave the session", _quit),
)
BY_NAME = {name: command for command in COMMANDS for name in command.names}

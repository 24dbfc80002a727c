"""What the CLI's commands do, importable and testable without Typer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen_cli.cli.automation import Outputs, RunWatch, watched
from massgen_cli.cli.mode_flags import ModeFlags
from massgen_cli.cli.quickstart import QuickStart
from massgen_cli.cli.signals import TERMINATED
from massgen_cli.cli.start_collections import resume_collections
from massgen_cli.errors import MassGenError, UsageError, outside_failure
from massgen_cli.stderr_console import StderrConsole, escape, rich_console

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp
    from massgen_cli.coordination.outcome import TurnResult
    from massgen_cli.ui import ConsoleView

SMALL_MODEL_NOTE = (
    "Using the embedded demo model (SmolLM2-135M, tiny): it shows the whole pipeline offline, but its "
    "answers are weak (its agents decide by agreement, not votes). For real work, pass --config with a real "
    "model (API key or your own server)."
)


@dataclass(frozen=True)
class RunOptions:
    """What the command line asked for."""

    question: str | None = None
    config: str | None = None
    state_dir: Path | None = None
    session: str | None = None
    quiet: bool = False
    debug: bool = False
    domain: str | None = None
    task_type: str | None = None
    quick: QuickStart = field(default_factory=QuickStart)
    outputs: Outputs = field(default_factory=Outputs)
    continue_session: bool = False
    max_cost: float | None = None
    modes: ModeFlags = field(default_factory=ModeFlags)


def ask_or_chat(options: RunOptions) -> int:
    """Answer one question (exit code 0, or 1 without an answer), or run an interactive session; what a
    script reads of it (``options.outputs``) is kept by a ``RunWatch`` to the end."""
    return watched(options.outputs, lambda watch: _ask_or_chat(_launched(options), watch))


def _launched(options: RunOptions) -> RunOptions:
    """The command line's usage checks; ``--continue``'s session and config."""
    from massgen_cli.cli.launch import check_question, check_session, continued

    check_question(options.question)
    check_session(options.session)
    options.outputs.check(options.question)
    if not options.continue_session:
        return options
    given = options.quick.given
    session, config = continued(options.state_dir, options.session, options.config, flags_build_config=given)
    if not options.quiet and not options.outputs.automated:
        StderrConsole().print(f"[dim]continuing session {escape(session)}[/]")
    return replace(options, session=session, config=config)


def _ask_or_chat(options: RunOptions, watch: RunWatch) -> int:
    from massgen_cli.app import MassGenApp
    from massgen_cli.cli.quickstart import load_run_config
    from massgen_cli.state import resolve_state_dir
    from massgen_cli.ui import ConsoleView

    question, quiet = options.question, options.quiet or options.outputs.automated
    loaded = load_run_config(options.config, options.quick)
    _override_memory_scope(loaded.config, options.domain, options.task_type)
    override_spending_cap(loaded.config, options.max_cost)
    options.modes.apply(loaded.config)
    _check_plan_question(loaded.config, question)
    console = StderrConsole()
    if quiet:  # what may harm the machine in full, the rest in one line: never silent
        for risk in loaded.risks:
            console.print(f"[yellow]warning:[/] {escape(risk)}")
    others = len(loaded.warnings) - len(loaded.risks)
    if quiet and others:
        console.print(
            f"[yellow]warning:[/] {others} config setting(s) ignored or run differently here "
            "(listed in each turn's summary.json; `massgen --validate` shows them)"
        )
    if not quiet:
        for warning in loaded.warnings:
            console.print(f"[yellow]warning:[/] {escape(warning)}")
        for note in loaded.notes:
            console.print(f"[dim]note: {escape(note)}[/]")
        if any(agent.backend.type == "local" for agent in loaded.config.agents):
            console.print(f"[dim]{SMALL_MODEL_NOTE}[/]")
    watch.prepare(loaded.config)
    ui = loaded.config.ui
    quiet_view = quiet or ui.display_type == "silent" or ui.automation_mode
    view = ConsoleView(
        loaded.config.agent_ids,
        console=console,
        out=watch.answer_out(),
        live=not quiet_view and ui.live_view and console.is_terminal,  # a quiet view asks no terminal
        quiet=quiet_view,
        debug=options.debug,
    )
    app = MassGenApp(
        loaded,
        listeners=(view,),
        state_dir=resolve_state_dir(options.state_dir),
        session_id=options.session,
        interactive=question is None,
    )
    resume_collections()  # held from a plain question's start (start_collections.py)
    watch.attach(app, question)
    try:  # SIGTERM ends the run like Ctrl-C (the command takes both signals: cli/signals.py)
        return _answer(app, view, question) if question is not None else _chat(app, view, console)
    except KeyboardInterrupt:
        app.close()  # backends, the embedded server, MCP servers, queued memory records
        console.print(f"[yellow]{_what_was_kept(app)}[/]")
        raise
    finally:
        app.close()
        if app.run_log.written:
            view.log_folder(app.run_log.directory)


def _check_plan_question(config: Any, question: str | None) -> None:
    if question is None and config.orchestrator.coordination.plan_mode == "plan_and_execute":
        raise UsageError('--plan-and-execute runs one question: massgen --plan-and-execute "your task"')


def _what_was_kept(app: Any) -> str:
    """The one line an interrupted run ends with."""
    how = "terminated" if TERMINATED.is_set() else "interrupted"
    session = app.session.id
    return (
        f"{how}: the running turn was cancelled; session {session} is kept with its answered turns "
        f"(continue with --session {session}) and queued memory records were written"
    )


def _override_memory_scope(config: Any, domain: str | None, task_type: str | None) -> None:
    """``--domain`` / ``--task-type`` win over ``memory.domain`` / ``memory.task_type`` everywhere."""
    memories = [config.memory, *(agent.memory for agent in config.agents if agent.memory is not None)]
    for memory in memories:
        memory.domain = domain or memory.domain
        memory.task_type = task_type or memory.task_type


def override_spending_cap(config: Any, max_cost: float | None) -> None:
    """``--max-cost`` wins over ``orchestrator.max_cost_usd``."""
    if max_cost is None:
        return
    if not (math.isfinite(max_cost) and max_cost > 0):
        raise UsageError(
            f"--max-cost {max_cost:g}: give an amount in US dollars above 0, e.g. --max-cost 0.50"
        )
    config.orchestrator.max_cost_usd = max_cost


def _answer(app: MassGenApp, view: ConsoleView, question: str) -> int:
    """Ask one question; the view has written the answer to stdout. In plan-and-execute mode the plan
    is made first, then a turn per chunk executes it: the answers before the last chunk's are shown on
    the console, and stdout gets the last chunk's."""
    if app.loaded.config.orchestrator.coordination.plan_mode != "plan_and_execute":
        _answered(app, view, app.ask(question))
        return 0
    from massgen_cli.plan_phases import execute_chunk, make_plan

    with view.answer_on_console():
        kept = make_plan(app, question)
    *earlier, last = kept.plan.chunks()
    for chunk in earlier:
        with view.answer_on_console():
            _answered(app, view, execute_chunk(app, question, kept, chunk))
    _answered(app, view, execute_chunk(app, question, kept, last))
    return 0


def _answered(app: MassGenApp, view: ConsoleView, result: TurnResult) -> None:
    """A turn without an answer is an error; its reason was said as the turn ended, unless quiet."""
    if result.final_answer is None:
        said = "" if view.quiet else f"no answer in turn {result.turn}"
        raise MassGenError(said or f"no answer: {result.end_reason}")


def _chat(app: MassGenApp, view: ConsoleView, stderr: StderrConsole) -> int:
    """One question per line (a prompt on a terminal); slash commands; Ctrl-C cancels a turn."""
    from massgen_cli.cli.chat_input import chat_lines
    from massgen_cli.cli.slash import ChatCommands

    console = rich_console(stderr)
    failures, commands = 0, ChatCommands(app, console)
    if not view.quiet:
        console.print(
            f"[bold]Session {app.session.id}[/] · turn {app.session.next_turn} · /help for commands"
        )
    for line in chat_lines(console, app.state_dir if app.session.saved else None):
        command = line.strip()
        if not command:
            continue
        if command.startswith("/"):
            if commands.run(command):
                break
            continue
        try:
            commands.latest = app.ask(command)
            _answered(app, view, commands.latest)
        except MassGenError as error:
            console.print(f"[red]error:[/] {escape(str(error))}")
            failures += 1
        except Exception as error:  # one turn's failure (from outside, or a bug) does not end the session
            line = outside_failure(error) or f"unexpected {type(error).__name__}: {error}"
            console.print(f"[red]error:[/] {escape(line)}")
            failures += 1
        except KeyboardInterrupt:
            if TERMINATED.is_set():
                raise
            console.print("[yellow]turn cancelled; the session goes on[/]")
    if not view.quiet and app.session.record.turns_started:  # without a turn, the session is not kept
        console.print(f"[dim]Session {app.session.id} saved; continue it with --session {app.session.id}[/]")
    return 1 if failures else 0


def print_examples() -> None:
    from massgen_cli.config.sources import EXAMPLES_DIR, shipped_configs

    for path in shipped_configs():
        print(f"@examples/{path.relative_to(EXAMPLES_DIR).with_suffix('')}")


def print_sessions(state_dir: Path | None, config: str | None = None) -> int:
    """This folder's sessions and, when the config (or the config of the folder's latest session) keeps
    memory on a server, the server's, each marked by where it is kept."""
    from massgen_cli.cli.sessions_kept import kept_sessions

    sessions, from_server = kept_sessions(state_dir, config)
    if not sessions:
        StderrConsole().print("no sessions yet")
    for session in sessions:
        record = session.record
        where = f"\tkept={session.where}" if from_server else ""
        print(f"{record.session_id}\tturns={record.turns_taken}\tupdated={record.updated_at}{where}")
    return 0


def show_session(
    state_dir: Path | None, session_id: str, *, as_json: bool = False, config: str | None = None
) -> int:
    """The session's turns (answered, failed and cancelled) with their winners, tokens and cost, where
    ``/reset`` began a new conversation, and the totals (turns recorded before costs were kept show none)."""
    import json
    from collections import Counter
    from dataclasses import asdict

    from massgen_cli.cli.sessions_kept import kept_session
    from massgen_cli.cli.slash import spending_table
    from massgen_cli.events import Usage

    kept = kept_session(state_dir, session_id, config)
    record = kept.record
    if as_json:
        print(json.dumps(asdict(record), ensure_ascii=False, indent=1))
        return 0
    ended = Counter(exchange.status for exchange in record.exchanges)
    said = ", ".join(
        f"{ended[status]} {status}" for status in ("answered", "failed", "cancelled") if ended[status]
    )
    unrecorded = record.turns_started - len(record.exchanges)
    table, used = spending_table(record)
    from rich.console import Console

    console = Console()
    console.print(table)
    turns = f"{len(record.exchanges)} turn(s)" + (f": {said}" if said else "")
    if unrecorded > 0:
        turns += f"; {unrecorded} more begun, not recorded"
    console.print(turns, soft_wrap=True)
    if used:
        console.print(f"Total: {Usage.total(used).describe()}", soft_wrap=True)
    if kept.where == "server":
        console.print("[dim]kept on the memory server (this folder has no copy)[/]", soft_wrap=True)
    if record.offline_turns:
        console.print(
            f"[yellow]{len(record.offline_turns)} turn(s) taken here while the memory server could not be "
            "reached wait to be filed there, with the next free numbers, by the next run that reaches it[/]",
            soft_wrap=True,
        )
    return 0

"""The ``massgen`` command: a thin layer that parses, loads the config, calls the library, renders,
and maps errors to exit codes (0 ok, 1 runtime failure, 2 usage or config error)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from massgen_cli import __version__

SUBCOMMANDS = ("sessions", "memory", "batch")
VALUE_OPTIONS = (
    "--config",
    "-c",
    "--state-dir",
    "--session",
    "--agent",
    "--limit",
    "--goal",
    "--domain",
    "--task-type",
    "--out",
    "--concurrency",
    "--shared-session",
    "--validate",
)

run_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
admin_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
sessions_app = typer.Typer(help="Inspect sessions.", no_args_is_help=True)
memory_app = typer.Typer(help="Inspect and manage long-term memory.", no_args_is_help=True)
admin_app.add_typer(sessions_app, name="sessions")
admin_app.add_typer(memory_app, name="memory")

ConfigOption = Annotated[
    str | None,
    typer.Option("--config", "-c", help="YAML config file, or @examples/NAME for a shipped one."),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Where sessions, logs and memory live (default ./.massgen, or MASSGEN_HOME)."
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks and memory log lines.")]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"massgen-cli {__version__}")
        raise typer.Exit()


@run_app.command(
    help="Ask QUESTION with the agents of a config; with no QUESTION, start an interactive session. "
    "Subcommands: `massgen batch`, `massgen sessions list|show`, "
    "`massgen memory search|list|values|clear|import`. "
    "A question starting with a subcommand's name goes after `--`."
)
def run(
    question: Annotated[
        str | None, typer.Argument(help="The question; omit it for a multi-turn session.")
    ] = None,
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Continue (or create) this session.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answer.")] = False,
    debug: DebugOption = False,
    domain: Annotated[
        str | None, typer.Option("--domain", help="Memory domain (overrides memory.domain).")
    ] = None,
    task_type: Annotated[
        str | None, typer.Option("--task-type", help="Memory task type (overrides memory.task_type).")
    ] = None,
    list_examples: Annotated[bool, typer.Option("--list-examples", help="List the shipped configs.")] = False,
    validate: Annotated[
        str | None,
        typer.Option(
            "--validate",
            metavar="FILE",
            help="Load a config (a path or @examples/NAME) without running it and print its errors, "
            "warnings and notes; exit 0 if valid, 2 if not.",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="With --validate: warnings are errors.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --validate: one JSON object.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    from massgen_cli.cli.commands import RunOptions, ask_or_chat, print_examples

    if list_examples:
        print_examples()
        return
    if validate is not None:
        from massgen_cli.cli.validate import validate_command

        _guarded(debug, lambda: validate_command(validate, strict=strict, as_json=as_json))
        return
    options = RunOptions(question, config, state_dir, session, quiet, debug, domain, task_type)
    _guarded(debug, lambda: ask_or_chat(options))


@admin_app.command(
    "batch",
    help="Answer every question of a JSONL file ({id?, question} per line), several at once, writing one "
    "result line per question to --out as each finishes. Exit 0 when all are answered, 1 when any failed.",
)
def batch(
    questions: Annotated[Path, typer.Argument(metavar="QUESTIONS.jsonl", help="One JSON object per line.")],
    out: Annotated[Path, typer.Option("--out", help="Where the result lines go (JSONL).")],
    config: ConfigOption = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Questions at once.")] = 4,
    resume: Annotated[bool, typer.Option("--resume", help="Skip the ids already in --out.")] = False,
    shared_session: Annotated[
        str | None,
        typer.Option("--shared-session", help="Ask every question in this one session (one at a time)."),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="Run each question as a Ray task: alone, on a local Ray instance; with an address "
            "(auto, host:port, ray://host:port), on that cluster. Needs the ray extra.",
        ),
    ] = None,
    state_dir: StateDirOption = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.batch_command import BatchOptions, run_batch

    options = BatchOptions(questions, out, config, concurrency, resume, shared_session, state_dir, ray)
    _guarded(debug, lambda: run_batch(options))


@sessions_app.command("list", help="List sessions, most recent first.")
def sessions_list(state_dir: StateDirOption = None, debug: DebugOption = False) -> None:
    from massgen_cli.cli.commands import print_sessions

    _guarded(debug, lambda: print_sessions(state_dir))


@sessions_app.command("show", help="A session's turns: questions, winners, tokens and cost, with totals.")
def sessions_show(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id (see `sessions list`).")],
    state_dir: StateDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The session's record as JSON.")] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.commands import show_session

    _guarded(debug, lambda: show_session(state_dir, session_id, as_json=as_json))


SessionFilter = Annotated[str | None, typer.Option("--session", help="Only this session's memories.")]
AgentFilter = Annotated[str | None, typer.Option("--agent", help="Only memories recorded by this agent.")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object per line.")]


class SearchMethod(StrEnum):
    hybrid = "hybrid"
    dense = "dense"
    lexical = "lexical"


@memory_app.command("search", help="Search long-term memory by meaning and words.")
def memory_search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: SessionFilter = None,
    agent: AgentFilter = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many results.")] = 10,
    domain: Annotated[str | None, typer.Option("--domain", help="Only memories of this domain.")] = None,
    task_type: Annotated[
        str | None, typer.Option("--task-type", help="Only memories of this task type.")
    ] = None,
    method: Annotated[
        SearchMethod,
        typer.Option("--method", help="hybrid (both rankings fused), dense (meaning) or lexical (words)."),
    ] = SearchMethod.hybrid,
    as_json: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

    scope = SearchFilter(session, agent, domain, task_type)
    _guarded(
        debug,
        lambda: memory_commands.search(
            query, config, state_dir, scope, limit=limit, as_json=as_json, method=method.value
        ),
    )


@memory_app.command("list", help="List stored memories with their keys.")
def memory_list(
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: SessionFilter = None,
    agent: AgentFilter = None,
    as_json: JsonOption = False,
    include_stale: Annotated[
        bool, typer.Option("--all", help="Also the memories agents marked stale, with the reason.")
    ] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(
        debug,
        lambda: memory_commands.list_memories(
            config, state_dir, session=session, agent=agent, as_json=as_json, include_stale=include_stale
        ),
    )


@memory_app.command("values", help="Rank memories by their learned value for a goal.")
def memory_values(
    goal: Annotated[str | None, typer.Option("--goal", help="The goal (default: the config's).")] = None,
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many memories.")] = 20,
    as_json: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(
        debug,
        lambda: memory_commands.values(config, state_dir, goal=goal, limit=limit, as_json=as_json),
    )


@memory_app.command("clear", help="Delete memories (asks first unless --yes).")
def memory_clear(
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: SessionFilter = None,
    everything: Annotated[bool, typer.Option("--all", help="Delete every memory.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(
        debug,
        lambda: memory_commands.clear(config, state_dir, session=session, everything=everything, yes=yes),
    )


@memory_app.command(
    "import", help="Import a JSONL file: one {content, role?, agent_id?, turn?, ...} per line."
)
def memory_import(
    path: Annotated[Path, typer.Argument(help="The JSONL file.")],
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Session to file the records under.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent to attribute records to.")] = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(
        debug, lambda: memory_commands.import_file(path, config, state_dir, session=session, agent=agent)
    )


def _guarded(debug: bool, action: Callable[[], int | None]) -> None:
    """Run ``action``; a MassGenError becomes red lines on stderr and its exit code."""
    from massgen_cli.errors import MassGenError

    try:
        code = action()
    except MassGenError as error:
        if debug:
            raise
        _print_error(error)
        raise typer.Exit(error.exit_code) from None
    except KeyboardInterrupt:
        from massgen_cli.cli.signals import TERMINATED

        raise typer.Exit(143 if TERMINATED.is_set() else 130) from None
    except Exception as error:  # from outside (the disk, a child process), or a bug of ours
        if debug:
            raise
        _print_error(RuntimeError(_failure_line(error)))
        raise typer.Exit(1) from None
    if code:
        raise typer.Exit(code)


def _failure_line(error: Exception) -> str:
    """What went wrong, in one line: plainly for what came from outside, as a bug otherwise."""
    from massgen_cli.errors import outside_failure

    outside = outside_failure(error)
    if outside is not None:
        return outside
    return f"unexpected {type(error).__name__}: {error} (a bug; run with --debug for details)"


def _print_error(error: Exception) -> None:
    from rich.console import Console
    from rich.markup import escape

    from massgen_cli.errors import ConfigError

    console = Console(stderr=True, highlight=False)
    lines = error.problems if isinstance(error, ConfigError) else [str(error)]
    for line in lines:
        console.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)


def _ray_value(args: list[str]) -> list[str]:
    """``--ray`` alone means a local Ray instance: it takes a value only when one that looks like an
    address follows (``auto``, ``local`` or something with a ``:``)."""
    if "--ray" not in args:
        return args
    at = args.index("--ray") + 1
    following = args[at] if at < len(args) else ""
    if following in ("auto", "local") or (":" in following and not following.startswith("-")):
        return args
    return [*args[:at], "local", *args[at:]]


def _first_positional(argv: list[str]) -> str | None:
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token == "--":
            return None
        elif token in VALUE_OPTIONS:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point: subcommands go to the admin app, everything else is a question."""
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    from massgen_cli.cli.signals import end_on_signals
    from massgen_cli.state import keep_files_private

    end_on_signals()  # from the start: loading a config or starting a server can take a while
    keep_files_private()
    first = _first_positional(args)
    app = admin_app if first in SUBCOMMANDS else run_app
    args = _ray_value(args) if first == "batch" else args
    try:
        app(args=args, prog_name="massgen")
    except SystemExit as ended:
        _leave_without_waiting(ended)
        raise


def _leave_without_waiting(ended: SystemExit) -> None:
    """The answer is out: a thread still running (a library's, or a call abandoned at its timeout) must
    not keep the process alive, so the process ends now when one is left."""
    import threading

    from massgen_cli.cli.signals import exit_now

    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if others and isinstance(ended.code, int | None):
        exit_now(ended.code or 0)

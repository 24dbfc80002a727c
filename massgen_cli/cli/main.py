"""The ``massgen`` command: a thin layer that parses, loads the config, calls the library, renders,
and maps errors to exit codes (0 ok, 1 runtime failure, 2 usage or config error)."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from massgen_cli import __version__
from massgen_cli.cli.argv import first_positional, options_after_command, ray_value
from massgen_cli.cli.guard import guarded as _guarded
from massgen_cli.cli.guard import leave_without_waiting, reader_gone, stdout_file, watch_stdout
from massgen_cli.cli.logs_commands import logs_app

SUBCOMMANDS = ("sessions", "memory", "batch", "logs")

run_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
admin_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
sessions_app = typer.Typer(help="Inspect and delete sessions.", no_args_is_help=True)
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
    "Subcommands: `massgen batch`, `massgen sessions list|show|delete|prune`, "
    "`massgen memory search|list|values|clear|import`, `massgen logs list|show|path|report`. "
    "A question starting with a subcommand's name goes after `--`. "
    "A subcommand's options may also stand before its name: `massgen --state-dir DIR sessions list`."
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
            "warnings and notes, what its start needs included (keys, paths, tools, MCP commands); "
            "exit 0 if valid, 2 if not.",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="With --validate: warnings are errors.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --validate: one JSON object.")] = False,
    deep: Annotated[
        bool, typer.Option("--deep", help="With --validate: start each MCP server and list its tools.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    from massgen_cli.cli.commands import RunOptions, ask_or_chat, print_examples

    if list_examples:
        _guarded(debug, print_examples)
        return
    if validate is not None:
        from massgen_cli.cli.validate import validate_command

        _guarded(debug, lambda: validate_command(validate, strict=strict, as_json=as_json, deep=deep))
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


YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")]


@sessions_app.command(
    "delete",
    help="Delete sessions (asks first unless --yes): each one's record, lock, threads and run log folders. "
    "Its long-term memories stay unless --memories. A session a running massgen holds is refused.",
)
def sessions_delete(
    session_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="The sessions' ids.")],
    memories: Annotated[
        bool, typer.Option("--memories", help="Also the memories recorded only in these sessions.")
    ] = False,
    config: Annotated[
        str | None,
        typer.Option(
            "--config", "-c", help="With --memories: the config of their store (default: each session's own)."
        ),
    ] = None,
    yes: YesOption = False,
    state_dir: StateDirOption = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.session_commands import delete_sessions

    _guarded(
        debug, lambda: delete_sessions(state_dir, session_ids, memories=memories, config=config, yes=yes)
    )


@sessions_app.command(
    "prune",
    help="Delete the sessions not used for a while, as `sessions delete` does; lists them first, and asks "
    "unless --yes.",
)
def sessions_prune(
    older_than: Annotated[
        str, typer.Option("--older-than", metavar="AGE", help="Unused for longer than AGE: 12h, 7d, 2w.")
    ],
    temp: Annotated[
        bool, typer.Option("--temp", help="Only the temp_* sessions of single questions (no --session).")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be deleted.")] = False,
    yes: YesOption = False,
    state_dir: StateDirOption = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.session_commands import prune_sessions

    _guarded(debug, lambda: prune_sessions(state_dir, older_than, temp_only=temp, dry_run=dry_run, yes=yes))


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
        bool,
        typer.Option(
            "--all", help="Also the memories agents marked stale (with the reason) and the --stubs."
        ),
    ] = False,
    include_stubs: Annotated[
        bool,
        typer.Option(
            "--stubs",
            help="Also the stubs of tool results a compression cut to their first line (hidden by default).",
        ),
    ] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(
        debug,
        lambda: memory_commands.list_memories(
            config,
            state_dir,
            session=session,
            agent=agent,
            as_json=as_json,
            include_stale=include_stale,
            include_stubs=include_stubs or include_stale,
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
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Agent to attribute records to (default: the importer, whose turn-0 lines every agent "
            "of the session sees).",
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_import

    _guarded(debug, lambda: memory_import.import_file(path, config, state_dir, session=session, agent=agent))


@memory_app.command(
    "migrate",
    help="Move the state folder's memory index (sources, values, marks) to the config's server store.",
)
def memory_migrate(
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    again: Annotated[
        bool, typer.Option("--again", help="Move it again, though it was moved before.")
    ] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands

    _guarded(debug, lambda: memory_commands.migrate(config, state_dir, again=again))


admin_app.add_typer(logs_app, name="logs")


def route(args: list[str]) -> tuple[typer.Typer, list[str]]:
    """The app that takes a command line, and the arguments as it reads them: a subcommand goes to the
    admin app (the options before its name moved after it), anything else is a question."""
    first = first_positional(args)
    if first not in SUBCOMMANDS:
        return run_app, args
    args = options_after_command(args, {group.name or "" for group in admin_app.registered_groups})
    return admin_app, ray_value(args) if first == "batch" else args


def main(argv: list[str] | None = None) -> None:
    """Entry point: subcommands go to the admin app, everything else is a question."""
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    from massgen_cli.cli.signals import end_on_signals
    from massgen_cli.state import keep_files_private

    end_on_signals()  # from the start: loading a config or starting a server can take a while
    keep_files_private()
    app, args = route(args)
    stdout_at_start = stdout_file()
    watch_stdout()
    try:
        app(args=args, prog_name="massgen")
    except SystemExit as ended:
        ending = SystemExit(0) if reader_gone(stdout_at_start) else ended
        leave_without_waiting(ending)
        raise ending from None

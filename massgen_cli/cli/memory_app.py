"""``massgen memory …``: search, list, rank, clear, import and migrate long-term memory (Typer's front;
what each command does lives in ``memory_commands`` and ``memory_import``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from massgen_cli.cli.guard import guarded as _guarded
from massgen_cli.cli.options import ConfigOption, DebugOption, JsonOption, StateDirOption

memory_app = typer.Typer(help="Inspect and manage long-term memory.", no_args_is_help=True)

SessionFilter = Annotated[str | None, typer.Option("--session", help="Only this session's memories.")]
AgentFilter = Annotated[str | None, typer.Option("--agent", help="Only memories recorded by this agent.")]
DATE_FORMS = (
    "a date (2023-05-08, 8 May 2023), a month (May 2023), a year or a relative date (yesterday, last month)"
)
SinceFilter = Annotated[
    str | None, typer.Option("--since", help=f"Only memories dated on or after this: {DATE_FORMS}.")
]
UntilFilter = Annotated[
    str | None, typer.Option("--until", help=f"Only memories dated on or before this: {DATE_FORMS}.")
]


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
    context: Annotated[
        int,
        typer.Option(
            "--context",
            min=0,
            help="Also show this many memories recorded before and after each result (0: none).",
        ),
    ] = 1,
    since: SinceFilter = None,
    until: UntilFilter = None,
    as_json: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli import memory_commands
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

    scope = SearchFilter(session, agent, domain, task_type)
    _guarded(
        debug,
        lambda: memory_commands.search(
            query,
            config,
            state_dir,
            memory_commands.dated(scope, since, until),
            limit=limit,
            as_json=as_json,
            method=method.value,
            context=context,
        ),
    )


@memory_app.command("list", help="List stored memories with their keys, who said them and their values.")
def memory_list(
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: SessionFilter = None,
    agent: AgentFilter = None,
    goal: Annotated[
        str | None,
        typer.Option(
            "--goal",
            help="The goal of the values shown (default: the config's value_learning.goal, else each "
            "memory's task type, the goal it learned for).",
        ),
    ] = None,
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
            goal=goal,
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

"""The subcommands (``massgen batch|serve|sessions|memory|logs …``), as Typer reads them; ``main`` routes a
command line here when its first word names one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from massgen_cli.cli.guard import guarded as _guarded
from massgen_cli.cli.logs_commands import logs_app
from massgen_cli.cli.memory_app import memory_app
from massgen_cli.cli.options import ConfigOption, DebugOption, StateDirOption, YesOption

admin_app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
sessions_app = typer.Typer(help="Inspect and delete sessions.", no_args_is_help=True)
admin_app.add_typer(sessions_app, name="sessions")
admin_app.add_typer(memory_app, name="memory")
admin_app.add_typer(logs_app, name="logs")


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
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            help="Spend at most this many US dollars on the whole batch (every question's caps count "
            "what the others spent; no question starts once it is spent, and --resume asks the rest).",
        ),
    ] = None,
    state_dir: StateDirOption = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.batch_command import BatchOptions, run_batch

    options = BatchOptions(
        questions, out, config, concurrency, resume, shared_session, state_dir, ray, max_cost
    )
    _guarded(debug, lambda: run_batch(options))


@admin_app.command(
    "serve",
    help="Serve the agents of each --config behind an OpenAI-compatible API (POST /v1/chat/completions, "
    "GET /v1/models): massgen/<config name> per config, massgen for the first. Ctrl-C stops it.",
)
def serve(
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            "-c",
            metavar="FILE",
            help="A config to serve (repeat for more); default: the embedded one.",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; any but this machine's needs a token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: a free one).")] = 4000,
    max_concurrent: Annotated[int, typer.Option("--max-concurrent", min=1, help="Turns at once.")] = 4,
    max_waiting: Annotated[
        int, typer.Option("--max-waiting", min=0, help="Requests that may wait for a turn; more get 429.")
    ] = 64,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env", metavar="VAR", help="Require 'Authorization: Bearer' with VAR's value."
        ),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="Require this bearer token (prefer --api-key-env).")
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME",
            help="A Host name to answer besides 127.0.0.1, localhost, [::1] and --host (repeat for more; "
            "'*': any).",
        ),
    ] = None,
    keys: Annotated[
        Path | None,
        typer.Option(
            "--keys",
            metavar="FILE",
            help="Tenants, one 'NAME TOKEN' per line (the file only its owner's): each token a tenant with "
            "its own sessions, memory, runs and reports.",
        ),
    ] = None,
    state_dir: StateDirOption = None,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.serve.command import ServeOptions
    from massgen_cli.serve.command import serve as serve_api

    options = ServeOptions(
        config or [], host, port, max_concurrent, max_waiting, api_key_env, token, state_dir, debug,
        tuple(allowed_host or ()), keys,
    )  # fmt: skip
    _guarded(debug, lambda: serve_api(options))


SessionsConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        "-c",
        help="Also the sessions its memory server keeps for every machine (default: the config this "
        "folder's latest session ran with).",
    ),
]


@sessions_app.command("list", help="List sessions, most recent first.")
def sessions_list(
    config: SessionsConfigOption = None, state_dir: StateDirOption = None, debug: DebugOption = False
) -> None:
    from massgen_cli.cli.commands import print_sessions

    _guarded(debug, lambda: print_sessions(state_dir, config))


@sessions_app.command("show", help="A session's turns: questions, winners, tokens and cost, with totals.")
def sessions_show(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id (see `sessions list`).")],
    config: SessionsConfigOption = None,
    state_dir: StateDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The session's record as JSON.")] = False,
    debug: DebugOption = False,
) -> None:
    from massgen_cli.cli.commands import show_session

    _guarded(debug, lambda: show_session(state_dir, session_id, as_json=as_json, config=config))


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
            "--config",
            "-c",
            help="The config whose memory server keeps these sessions for every machine (they are deleted "
            "there too, even those this folder never kept) and whose store --memories clears (default: "
            "each session's own, else the one this folder's latest session ran with).",
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

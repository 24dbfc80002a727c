"""``massgen logs …``: list runs, tell what happened in them, print their folders, draw their report.

What each command does is a plain function here (``list_runs``, ``show_runs``, ``print_paths``,
``write_report``); ``logs_app`` is their Typer front, which ``main`` mounts as ``massgen logs``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from massgen_cli.cli.guard import guarded

Target = Annotated[
    str | None,
    typer.Argument(
        metavar="[RUN|SESSION]",
        help="A run's log folder (log_<timestamp>, or its path) or a session id (all its runs); "
        "the latest run when omitted.",
    ),
]
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Where sessions, logs and memory live (default ./.massgen, or MASSGEN_HOME)."
    ),
]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]


logs_app = typer.Typer(help="Find and read run logs; draw a run's report.", no_args_is_help=True)


@logs_app.command("list", help="Runs, newest first: session, turns, status, winner, cost, question.")
def list_command(
    state_dir: StateDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    debug: Debug = False,
) -> None:
    guarded(debug, lambda: list_runs(state_dir, as_json=as_json))


@logs_app.command("show", help="What happened in each turn: answers, votes, restarts, tools, memory, cost.")
def show_command(target: Target = None, state_dir: StateDir = None, debug: Debug = False) -> None:
    guarded(debug, lambda: show_runs(state_dir, target))


@logs_app.command("path", help="The log folder of a run (or of each run of a session).")
def path_command(target: Target = None, state_dir: StateDir = None, debug: Debug = False) -> None:
    guarded(debug, lambda: print_paths(state_dir, target))


@logs_app.command(
    "report", help="Write one self-contained HTML report (a timeline per turn) and print its path."
)
def report_command(
    target: Target = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to write it (default: report.html in the run's folder; for a session, "
            "report_<session>.html beside the runs).",
        ),
    ] = None,
    open_it: Annotated[
        bool, typer.Option("--open", help="Open it in the web browser (said when none is found).")
    ] = False,
    state_dir: StateDir = None,
    debug: Debug = False,
) -> None:
    guarded(debug, lambda: write_report(state_dir, target, out, open_it=open_it))


def _state(state_dir: Path | None) -> Path:
    from massgen_cli.state import resolve_state_dir

    return resolve_state_dir(state_dir)


def list_runs(state_dir: Path | None, *, as_json: bool = False) -> int:
    from massgen_cli.runlogs.account import run_line
    from massgen_cli.runlogs.reader import all_runs, logs_root

    folder = _state(state_dir)
    runs = all_runs(folder)
    if not runs:
        typer.echo(f"no run logs under {logs_root(folder)} yet", err=True)
    for run in runs:
        line = run_line(run)
        print(json.dumps(line.record(), ensure_ascii=False) if as_json else line.text())
    return 0


def show_runs(state_dir: Path | None, target: str | None) -> int:
    from massgen_cli.runlogs.account import account
    from massgen_cli.runlogs.reader import find_runs

    for line in account(find_runs(_state(state_dir), target)):
        print(line)
    return 0


def print_paths(state_dir: Path | None, target: str | None) -> int:
    from massgen_cli.runlogs.reader import find_runs

    for run in find_runs(_state(state_dir), target):
        print(run.folder)
    return 0


def write_report(
    state_dir: Path | None, target: str | None, out: Path | None, *, open_it: bool = False
) -> int:
    """Write the report of ``target``'s runs to ``out`` (or its default place) and print where."""
    from massgen_cli.errors import MassGenError
    from massgen_cli.runlogs.reader import find_runs, names_a_run
    from massgen_cli.runlogs.report import report_html

    runs = find_runs(_state(state_dir), target)
    single = names_a_run(target)
    title = runs[0].name if single else str(target)
    path = out or (
        runs[0].folder / "report.html" if single else runs[0].folder.parent / f"report_{title}.html"
    )
    try:
        path.write_text(report_html(runs, title), encoding="utf-8")
    except OSError as error:
        raise MassGenError(
            f"cannot write the report to {path} ({error}); choose another place with --out"
        ) from None
    print(path)
    if open_it:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            typer.echo(f"no web browser found to open it; open {path.resolve()} in one", err=True)
    return 0

"""A question read without Typer: ``massgen [--config FILE] [--quiet] [--debug] [--session ID]
[--state-dir DIR] "QUESTION"``, each option given once as ``--option VALUE``, is the line scripts,
benchmarks and other agents run again and again, and Typer's import and its reading of the question
command's 34 options (it builds a pydantic adapter for each typed one) came before every first model
request. Anything else (another option, ``--help``, no question, a mistake,
``--option=VALUE``, an option given twice, a subcommand's name) is left to Typer, so what is said
about it stays Typer's own words."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from massgen_cli.cli.plain_args import plain_fields

if TYPE_CHECKING:
    from massgen_cli.cli.commands import RunOptions

VALUE_OPTIONS = {
    "--config": "config",
    "-c": "config",
    "--session": "session",
    "--session-id": "session",
    "--state-dir": "state_dir",
}
"""The question command's options that take a value (``run_app.run``), by the field they set."""
SWITCHES = {"--quiet": "quiet", "-q": "quiet", "--debug": "debug"}


def plain_question(args: list[str], subcommands: tuple[str, ...]) -> RunOptions | None:
    """``args`` as a question when they are its plain form (no word of ``subcommands`` as the question),
    else None (Typer reads them)."""
    fields = plain_fields(args, VALUE_OPTIONS, SWITCHES, "question", subcommands)
    if fields is None:
        return None
    if "question" not in fields:
        return None  # an interactive session
    if "state_dir" in fields:
        fields["state_dir"] = Path(fields["state_dir"])
    from massgen_cli.cli.commands import RunOptions

    return RunOptions(**fields)


def ask_plainly(options: RunOptions) -> NoReturn:
    """What ``run_app.run`` does with the same command line; ends with its exit code."""
    from massgen_cli.cli.commands import ask_or_chat
    from massgen_cli.cli.guard import outcome

    raise SystemExit(outcome(options.debug, lambda: ask_or_chat(options)))

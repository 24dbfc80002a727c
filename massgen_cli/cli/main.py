"""The ``massgen`` command: a thin layer that parses, loads the config, calls the library, renders,
and maps errors to exit codes (0 ok, 1 runtime failure, 2 usage or config error). A question goes to
``run_app.run_app``; a subcommand to ``admin.admin_app``; a plain ``memory search`` to
``quick_search`` and a plain question to ``plain_question``, which read them without Typer. Each is
imported only when it is the one."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from massgen_cli.cli.argv import first_positional, options_after_command, ray_value
from massgen_cli.cli.guard import (
    end_read_only,
    leave_without_waiting,
    reader_gone,
    spare_the_last_collections,
    stdout_file,
    watch_stdout,
)
from massgen_cli.cli.mode_flags import single_agent_argv
from massgen_cli.cli.start_collections import hold_collections, resume_collections

if TYPE_CHECKING:
    import typer

SUBCOMMANDS = ("sessions", "memory", "batch", "logs", "serve")
READ_ONLY_COMMANDS = frozenset(
    {
        ("memory", "search"),
        ("memory", "list"),
        ("memory", "values"),
        ("sessions", "list"),
        ("sessions", "show"),
        ("logs", "list"),
        ("logs", "show"),
        ("logs", "path"),
    }
)
"""Commands that only read: once their output is out, the process ends without the interpreter's
teardown of what they imported (numpy, onnxruntime, pydantic…), about 0.2 s of a memory search."""


def _refuse_massgen_words(args: list[str]) -> None:
    """MassGen's command words end here, with a usage error saying what does their job."""
    from massgen_cli.cli.massgen_words import massgen_word_refusal

    refusal = massgen_word_refusal(args)
    if refusal is not None:
        from massgen_cli.cli.guard import print_error
        from massgen_cli.errors import UsageError

        print_error(UsageError(refusal))
        raise SystemExit(UsageError.exit_code)


def route(args: list[str]) -> tuple[typer.Typer, list[str]]:
    """The app that takes a command line, and the arguments as it reads them: a subcommand goes to the
    admin app (the options before its name moved after it), anything else is a question."""
    first = first_positional(args)
    if first not in SUBCOMMANDS:
        from massgen_cli.cli.run_app import run_app

        return run_app, args
    from massgen_cli.cli.admin import admin_app

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
    _refuse_massgen_words(args)
    hold_collections()  # a plain question's start, until its run is built (start_collections.py)
    command, args = _command(single_agent_argv(args))
    stdout_at_start = stdout_file()
    watch_stdout()
    try:
        command()
    except SystemExit as ended:
        ending = SystemExit(0) if reader_gone(stdout_at_start) else ended
        resume_collections()  # when the run ended before it was built
        leave_without_waiting(ending)
        if _command_words(args) in READ_ONLY_COMMANDS:
            end_read_only(ending)
        spare_the_last_collections()
        raise ending from None


def _command(args: list[str]) -> tuple[Callable[[], object], list[str]]:
    """What runs the command line (it ends by raising SystemExit), and its arguments as read: a plain
    ``memory search`` or question without Typer (``quick_search``, ``plain_question``), anything else
    through the app ``route`` gives."""
    from massgen_cli.cli.plain_question import ask_plainly, plain_question

    options = plain_question(args, SUBCOMMANDS)
    if options is not None:  # the collections resume once its run is built
        return (lambda: ask_plainly(options)), args
    resume_collections()
    if args[:2] == ["memory", "search"]:
        from massgen_cli.cli.quick_search import plain_search, run_search

        call = plain_search(args)
        if call is not None:
            return (lambda: run_search(call)), args
    app, args = route(args)
    return (lambda: app(args=args, prog_name="massgen")), args


def _command_words(args: list[str]) -> tuple[str | None, str | None]:
    """A subcommand's group and command names (``("memory", "search")``), as written."""
    group = first_positional(args)
    rest = args[args.index(group) + 1 :] if group is not None else []
    return group, first_positional(rest)

"""How every command ends: its errors become red lines and exit codes, a stdout whose reader went away
(``massgen … | head -1``) ends it quietly with exit 0, as coreutils do, and a thread left running does not
hold the process."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import typer


def guarded(debug: bool, action: Callable[[], int | None]) -> None:
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
    except BrokenPipeError:  # stdout's reader went away (`| head -1`): the command ends quietly
        from massgen_cli.ui import to_devnull

        to_devnull(sys.stdout)
        raise typer.Exit(0) from None
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


def stdout_file() -> os.stat_result | None:
    """What stdout's file descriptor is (None when stdout has none, as inside a test's capture)."""
    try:
        return os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None


def reader_gone(stdout_at_start: os.stat_result | None) -> bool:
    """Whether stdout's reader went away during the command (a pipe closed early, as by ``head``): the
    last flush finds the pipe closed, or a write did and stdout was handed to /dev/null (Python's advice
    on SIGPIPE, which Rich follows for its consoles). Such a command ends quietly, with exit 0."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from massgen_cli.ui import to_devnull

        to_devnull(sys.stdout)
        return True
    now = stdout_file()
    if stdout_at_start is None or now is None or os.path.samestat(now, stdout_at_start):
        return False
    return os.path.samestat(now, os.stat(os.devnull))


def leave_without_waiting(ended: SystemExit) -> None:
    """The answer is out: a thread still running (a library's, or a call abandoned at its timeout) must
    not keep the process alive, so the process ends now when one is left."""
    import threading

    from massgen_cli.cli.signals import exit_now

    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if others and isinstance(ended.code, int | None):
        exit_now(ended.code or 0)

"""Run as a script in front of an unsandboxed command or an MCP server (``python -I -S reaper.py
RUNNER_PID PROGRAM…``): all the program starts dies with the runner, even when the runner is killed with
SIGKILL. (A sandboxed command has this from bubblewrap's --die-with-parent and its PID namespace too.)
A script rather than a ``preexec_fn``: the runner has threads, and Python code run between ``fork`` and
``exec`` in a process with threads can deadlock.

The reaper asks the kernel for SIGTERM when its parent, the runner, dies (PR_SET_PDEATHSIG) and to
adopt the orphans of what it starts (PR_SET_CHILD_SUBREAPER), so a process that left its group with
setsid is still found by its parentage. It starts PROGRAM, waits for it and exits with its status; on
SIGTERM it kills every descendant first. ``reaped`` is how the runner puts a program behind it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
EXIT_CANNOT_RUN = 127


def reaped(program: list[str]) -> list[str]:
    """The command line that runs ``program`` behind the reaper, tied to this process."""
    return [sys.executable, "-I", "-S", str(Path(__file__)), str(os.getpid()), *program]


def parents() -> dict[int, int]:
    """Each live process's parent, from ``/proc``."""
    found: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with (
                contextlib.suppress(OSError, IndexError, ValueError),
                open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat,
            ):
                found[int(entry)] = int(stat.read().rsplit(") ", 1)[1].split()[1])
    return found


def descendants(root: int) -> list[int]:
    """The ids of every live process below ``root`` (parents before children)."""
    parent_of = parents()
    found: list[int] = []
    frontier = {root}
    while frontier:
        children = [pid for pid, parent in parent_of.items() if parent in frontier]
        found += children
        frontier = set(children)
    return found


def kill_descendants(root: int) -> None:
    for pid in descendants(root):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _ask_kernel(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the runner died before the kernel was asked
        os._exit(137)


def _on_term(signum: int, frame: object) -> None:
    kill_descendants(os.getpid())
    os._exit(128 + signum)


def _become(program: list[str]) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        os.execvp(program[0], program)
    except OSError as error:
        sys.stderr.write(f"cannot run {program[0]!r}: {error.strerror or error}\n")
        os._exit(EXIT_CANNOT_RUN)


def main(arguments: list[str]) -> None:
    _ask_kernel(int(arguments[0]))
    signal.signal(signal.SIGTERM, _on_term)
    child = os.fork()
    if child == 0:
        _become(arguments[1:])
    while True:  # reap the adopted orphans too, until the command itself ends
        pid, status = os.wait()
        if pid == child:
            break
    kill_descendants(os.getpid())  # what it left running in the background ends with it
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main(sys.argv[1:])

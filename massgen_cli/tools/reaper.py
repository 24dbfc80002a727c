"""Run as a script in front of an unsandboxed command or an MCP server (``python -I -S reaper.py
RUNNER_PID own-pids|shared-pids PROGRAM…``): all the program starts dies with the runner, even when the
runner is killed with SIGKILL. (A sandboxed command has this from bubblewrap's --die-with-parent and its
PID namespace too.) A script rather than a ``preexec_fn``: the runner has threads, and Python code run
between ``fork`` and ``exec`` in a process with threads can deadlock.

The reaper asks the kernel for SIGTERM when its parent, the runner, dies (PR_SET_PDEATHSIG) and to
adopt the orphans of what it starts (PR_SET_CHILD_SUBREAPER), so a process that left its group with
setsid is still found by its parentage. Between it and PROGRAM stands a first process of their own
(``_first``). For a command (``own-pids``), as root, that is the first process of a new PID namespace:
nothing inside can kill it (the kernel ignores SIGKILL sent to it from its own namespace), and its end
ends every process in the namespace, so ``kill -9 $PPID`` does nothing and no ``setsid`` child outlives
the program. Elsewhere it is a plain process, whose killing ends the program too (the reaper, still
alive, then kills what is left; a program that finds and kills the reaper itself can still leave a
child behind: only the sandbox is a boundary). The reaper waits for the first process and exits with
PROGRAM's status; on SIGTERM it kills every descendant first. ``reaped`` is how the runner puts a
program behind it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18
EXIT_CANNOT_RUN = 127
OWN_PIDS, SHARED_PIDS = "own-pids", "shared-pids"


def reaped(program: list[str], *, own_pids: bool = False) -> list[str]:
    """The command line that runs ``program`` behind the reaper, tied to this process; ``own_pids``
    puts it in a PID namespace of its own where the kernel allows it (agents' commands; not the
    programs a user configured, such as MCP servers, which see the host as they expect)."""
    mode = OWN_PIDS if own_pids else SHARED_PIDS
    return [sys.executable, "-I", "-S", str(Path(__file__)), str(os.getpid()), mode, *program]


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


def _ask_kernel(libc: ctypes.CDLL, parent: int) -> None:
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the runner died before the kernel was asked
        os._exit(137)


def _first(libc: ctypes.CDLL, program: list[str], own_namespace: bool) -> None:
    """The program's first process: it dies with the reaper, starts the program, reaps what is
    orphaned below it and exits with the program's status (in its own PID namespace, with that
    namespace's processes shown in /proc when the kernel allows a mount of it)."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if own_namespace:
        _show_own_processes(libc)
    child = os.fork()
    if child == 0:
        _become(program)
    os._exit(_exit_code(_wait_for(child)))


def _show_own_processes(libc: ctypes.CDLL) -> None:
    """A /proc of the namespace's own, in a mount namespace of the program's (the reaper keeps the
    host's /proc, which it reads to find descendants); best effort: without it, tools that read /proc
    show the host's processes."""
    if libc.unshare(CLONE_NEWNS) == 0 and libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0:
        libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)


def _wait_for(child: int) -> int:
    """Reap every child (adopted orphans too) until ``child`` ends; its wait status."""
    while True:
        pid, status = os.wait()
        if pid == child:
            return status


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


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
    libc = ctypes.CDLL(None, use_errno=True)
    _ask_kernel(libc, int(arguments[0]))
    signal.signal(signal.SIGTERM, _on_term)
    # As root; no user namespace is made for it, so sudo and file owners stay as they are.
    own_namespace = arguments[1] == OWN_PIDS and libc.unshare(CLONE_NEWPID) == 0
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _first(libc, arguments[2:], own_namespace)
    status = _wait_for(child)
    kill_descendants(os.getpid())  # what it left running in the background ends with it
    os._exit(_exit_code(status))


if __name__ == "__main__":
    main(sys.argv[1:])

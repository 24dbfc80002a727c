"""Run as a script between the runner and an MCP server (``python -I -S mcp_launch.py RUNNER_PID
PROGRAM…``): it asks the kernel to SIGKILL it when the runner dies (``PR_SET_PDEATHSIG``, kept across
``exec``), then becomes PROGRAM. So a server dies with the runner even when the runner is SIGKILLed and
has no chance to stop it.

A script rather than a ``preexec_fn``: the runner has threads, and running Python code between ``fork``
and ``exec`` in a process with threads can deadlock."""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1
EXIT_CANNOT_RUN = 127


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when ``parent`` dies; exit at once if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            sys.stderr.write(f"mcp_launch: prctl failed: {os.strerror(ctypes.get_errno())}\n")
    if os.getppid() != parent:  # the runner died before the request took effect
        sys.exit(1)


def main(arguments: list[str]) -> None:
    die_with_parent(int(arguments[0]))
    program = arguments[1:]
    try:
        os.execvp(program[0], program)
    except OSError as error:
        sys.stderr.write(f"cannot run {program[0]!r}: {error.strerror or error}\n")
        sys.exit(EXIT_CANNOT_RUN)


if __name__ == "__main__":
    main(sys.argv[1:])

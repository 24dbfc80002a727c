"""A sandboxed command's process count, watched from outside. The kernel's process limit (RLIMIT_NPROC)
holds for every user but root, and a root launcher joins a pids cgroup where the machine allows one
(tools/sandbox_launch.py); as a last guard, a root runner counts the processes in the sandbox's PID
namespace and stops the command once it holds more than the limit (the run goes on)."""

from __future__ import annotations

import asyncio
import os

from massgen_cli.tools.reaper import parents

WATCH_INTERVAL_S = 0.05


async def watch_process_count(sandbox_pid: int, limit: int) -> str:
    """Return (a message) once the sandbox started as ``sandbox_pid`` holds more than ``limit``
    processes; run until cancelled otherwise."""
    namespace = ""
    while True:
        await asyncio.sleep(WATCH_INTERVAL_S)
        namespace = namespace or _inner_namespace(sandbox_pid)
        if namespace and _count_in(namespace, limit + 1) > limit:
            return (
                f"the command ran more than {limit} processes at once (command_line_limits.processes) "
                "and was stopped with all it started"
            )


def _inner_namespace(sandbox_pid: int) -> str:
    """The PID namespace of the sandbox's first process (a child of ``sandbox_pid`` in a namespace of
    its own), or '' before it exists."""
    own = _namespace_of("self")
    for pid in _children_of(sandbox_pid):
        namespace = _namespace_of(str(pid))
        if namespace and namespace != own:
            return namespace
    return ""


def _children_of(parent: int) -> list[int]:
    return [pid for pid, its_parent in parents().items() if its_parent == parent]


def _count_in(namespace: str, up_to: int) -> int:
    """How many processes are in ``namespace``, counted up to ``up_to`` (a fork loop stops the count
    early, not the runner)."""
    count = 0
    for pid in _pids():
        count += _namespace_of(str(pid)) == namespace
        if count >= up_to:
            break
    return count


def _namespace_of(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()]

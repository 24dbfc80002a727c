"""execute_command: a shell command run in the agent's workspace, in the sandbox by default
(tools/sandbox.py; unconfined only when the config says ``local_unsandboxed``), as its own process group,
with a timeout that kills all it started, bounded output and the exit code in the result. The allowed and
blocked patterns apply to every command of the line (tools/command_policy.py). The command's environment
has no variable that looks like a secret (keys, tokens, passwords)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.config.tools import CommandLimits
from massgen_cli.redaction import command_environment
from massgen_cli.state import user_umask
from massgen_cli.tools.base import (
    COMMAND_TOOL,
    EXIT_CODE,
    OUTPUT_HEARD,
    CommandOutcome,
    Tool,
    ToolError,
    ToolOutput,
    argument,
    schema,
)
from massgen_cli.tools.command_policy import CommandPolicy
from massgen_cli.tools.paths import Roots
from massgen_cli.tools.process_watch import watch_process_count
from massgen_cli.tools.protected import Guard, remove_planted
from massgen_cli.tools.reaper import reaped
from massgen_cli.tools.sandbox import Mount, SandboxSpec, hidden_paths
from massgen_cli.tools.sandbox_launch import pids_cgroup, stale_pids_cgroups
from massgen_cli.tools.set_id_sweep import clear_set_id_bits

DEFAULT_TIMEOUT_S = 60.0
OUTPUT_HEAD_BYTES = 8_000
OUTPUT_TAIL_BYTES = 4_000
OUTPUT_SUMMARY_LINES = 5
OUTPUT_SUMMARY_CHARS = 400
CLEAN_UP_S = 15.0
"""How long past the call's timeout a command that timed out has to be killed and its sandbox removed."""


@dataclass(frozen=True)
class Confinement:
    """How a command runs: in the sandbox made from the agent's roots at each call (what it may write
    can change when it presents), or unconfined (``sandbox`` None)."""

    roots: Roots
    sandbox: SandboxSettings | None

    def argv(self, command: str, guards: Sequence[Guard] = ()) -> list[str]:
        """The command line: the shell in the sandbox (its protected places kept as ``guards`` say), or
        behind the reaper that ends all it started with the runner (the sandbox does that itself)."""
        shell = ["/bin/sh", "-c", command]
        if self.sandbox is None:
            return reaped(shell, own_pids=True)
        return self.sandbox.spec(self.roots, guards).command(shell)

    def guards(self) -> list[Guard]:
        """How a sandboxed command is kept from what the user runs unread (none for an unconfined one)."""
        if self.sandbox is None:
            return []
        return self.roots.guards(hidden_paths(self.sandbox.hidden))

    def writable_folders(self) -> list[Path]:
        """The folders a sandboxed command may write now (none are tracked for an unconfined one)."""
        if self.sandbox is None:
            return []
        return [root.path for root in self.roots.roots if self.roots.may_write(root)]


@dataclass(frozen=True)
class SandboxSettings:
    """The sandbox of one agent's commands: folders hidden besides the usual ones, network, limits."""

    hidden: tuple[Path, ...] = ()
    network: bool = False
    limits: CommandLimits = field(default_factory=CommandLimits)

    def spec(self, roots: Roots, guards: Sequence[Guard] = ()) -> SandboxSpec:
        """The sandbox of a command: the roots, and in those it may write the protected places read-only
        and the folders above them bound onto themselves (mount points cannot be renamed)."""
        mounts = [Mount(root.path, roots.may_write(root)) for root in roots.roots]
        mounts += [Mount(path, writable=True) for kept in guards for path in kept.pinned]
        mounts += [Mount(path, writable=False) for kept in guards for path in kept.read_only]
        return SandboxSpec(tuple(mounts), roots.base, self.hidden, self.network, self.limits)


def command_tool(confinement: Confinement, policy: CommandPolicy, max_timeout_s: float) -> Tool:
    """The ``execute_command`` tool, run in the agent's workspace as ``confinement`` says; no call may
    last over ``max_timeout_s``."""

    async def run(arguments: dict[str, Any]) -> ToolOutput:
        command = argument(arguments, "command", str)
        try:
            timeout = float(argument(arguments, "timeout_seconds", (int, float), DEFAULT_TIMEOUT_S))
            policy.check(command)
        except ToolError as error:
            raise ToolError(str(error), CommandOutcome(command, "refused")) from None
        exited = await run_command(confinement, command, min(max(timeout, 1.0), max_timeout_s))
        return ToolOutput(exited.text, CommandOutcome(command, "exited", exited.code))

    where = (
        "in a sandbox: only your folders are visible, writable where you may write"
        if (confinement.sandbox is not None)
        else "unconfined"
    )
    spec = ToolSpec(
        COMMAND_TOOL,
        f"Run a shell command in your workspace ({where}); returns its exit code and output (stdout and "
        "stderr).",
        schema(
            {
                "command": {"type": "string"},
                "timeout_seconds": {"type": "number", "description": f"Default {DEFAULT_TIMEOUT_S:g}."},
            },
            ["command"],
        ),
    )
    return Tool(spec, run, grace_s=CLEAN_UP_S)


@dataclass(frozen=True)
class Exited:
    """A command that ran to its end: its exit code, and what the model reads (``exit code: N`` and the
    output)."""

    code: int
    text: str


async def run_command(confinement: Confinement, command: str, timeout_s: float) -> Exited:
    """Run ``command``; on timeout or cancellation its whole process group (and sandbox) is killed (a
    ``ToolError`` says how it ended)."""
    started, cleared, removed = time.time(), [], []
    guards = await asyncio.to_thread(confinement.guards)
    process = await asyncio.create_subprocess_exec(
        *confinement.argv(command, guards),
        cwd=confinement.roots.base,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=command_environment(),
        umask=user_umask(),  # what a command creates is the user's, with the user's usual mode
    )
    reading = asyncio.ensure_future(_read_all(process))
    watching = _process_watch(confinement, process)
    try:
        done, _ = await asyncio.wait({reading, *watching}, timeout=timeout_s, return_when="FIRST_COMPLETED")
        if not done:
            raise ToolError(
                f"timed out after {timeout_s:g}s; the command and its children were killed",
                CommandOutcome(command, "timed_out"),
            )
        if reading not in done:
            raise ToolError(next(iter(done)).result(), CommandOutcome(command, "failed"))
        output = reading.result()
    finally:
        for task in (reading, *watching):
            task.cancel()
        await _kill_group(process)
        if confinement.sandbox is not None:
            await _remove_pids_cgroup(process.pid)
            cleared = await asyncio.to_thread(clear_set_id_bits, confinement.writable_folders(), started)
            removed = await asyncio.to_thread(_remove_planted, guards)
    assert process.returncode is not None, "_kill_group waited for it"
    code = process.returncode
    return Exited(code, f"{EXIT_CODE}{code}\n{output}{_cleared_note(cleared)}{_removed_note(removed)}")


def _remove_planted(guards: Sequence[Guard]) -> list[Path]:
    """What the command made at protected places, removed (it and all it started have ended)."""
    return remove_planted(path for kept in guards for path in kept.planted())


def _removed_note(removed: list[Path]) -> str:
    if not removed:
        return ""
    named = ", ".join(str(path) for path in removed[:5]) + (" …" if len(removed) > 5 else "")
    return f"\n[removed what the command made where the user runs files unread ({len(removed)}): {named}]"


def _cleared_note(cleared: list[Path]) -> str:
    if not cleared:
        return ""
    named = ", ".join(str(path) for path in cleared[:5]) + (" …" if len(cleared) > 5 else "")
    return f"\n[set-user/group-ID bits cleared on {len(cleared)} file(s) the command marked: {named}]"


def command_summary(result: str) -> str:
    """What the run's events say of a command's result (``exit code: N`` and the output): the exit code
    line and the first lines of output, blank ones skipped, at most ``OUTPUT_SUMMARY_LINES`` lines and
    ``OUTPUT_SUMMARY_CHARS`` characters, with a count of the lines left out."""
    code, _, output = result.partition("\n")
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    shown = "\n".join([code, *lines[:OUTPUT_SUMMARY_LINES]])
    more = f"\n[{len(lines) - OUTPUT_SUMMARY_LINES} more lines]" if len(lines) > OUTPUT_SUMMARY_LINES else ""
    if len(shown) + len(more) > OUTPUT_SUMMARY_CHARS:
        shown = shown[: OUTPUT_SUMMARY_CHARS - len(more) - 1] + "…"
    return shown + more


def _process_watch(confinement: Confinement, process: asyncio.subprocess.Process) -> list[asyncio.Task[str]]:
    """The kernel does not hold root to the process limit, so a root runner counts the sandbox's
    processes itself and stops the command past the limit."""
    if confinement.sandbox is None or os.geteuid() != 0:
        return []
    limit = confinement.sandbox.limits.processes
    return [asyncio.create_task(watch_process_count(process.pid, limit))]


async def _read_all(process: asyncio.subprocess.Process) -> str:
    """The command's output as it comes, holding only its head and its tail (a command may print
    without end)."""
    assert process.stdout is not None
    head, tail, total = bytearray(), bytearray(), 0
    heard = OUTPUT_HEARD.get()
    while chunk := await process.stdout.read(1 << 16):
        if heard is not None:
            heard(chunk)
        total += len(chunk)
        room = OUTPUT_HEAD_BYTES - len(head)
        head += chunk[:room]
        tail = (tail + chunk[max(room, 0) :])[-OUTPUT_TAIL_BYTES:]
    await process.wait()
    if total <= len(head) + len(tail):
        return (head + tail).decode("utf-8", errors="replace")
    note = f"[cut: {total - len(head) - len(tail):,} bytes of output not shown]"
    return f"{head.decode('utf-8', errors='replace')}\n{note}\n{tail.decode('utf-8', errors='replace')}"


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            await process.wait()


async def _remove_pids_cgroup(launcher_pid: int) -> None:
    """The pids cgroup a root launcher joined, removed once its processes are gone (they die with the
    sandbox; the kernel may take a moment to reap them)."""
    if os.geteuid() != 0:
        return
    group = pids_cgroup(launcher_pid)
    for _ in range(100):
        if group is None or not group.exists():
            break
        with contextlib.suppress(OSError):
            group.rmdir()
        await asyncio.sleep(0.02)
    for stale in stale_pids_cgroups():  # what earlier runs left (killed, or their removal timed out)
        with contextlib.suppress(OSError):
            stale.rmdir()

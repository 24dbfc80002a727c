"""execute_command: a shell command run in the agent's workspace as its own process group, with a
timeout that kills the whole group, bounded output and the exit code in the result. Allowed and
blocked command patterns are regular expressions matched from the command's start. The command's
environment has no variable that looks like a secret (keys, tokens, passwords)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.state import user_umask
from massgen_cli.tools.base import Tool, ToolError, argument, schema

DEFAULT_TIMEOUT_S = 60.0
OUTPUT_HEAD_CHARS = 8_000
OUTPUT_TAIL_CHARS = 4_000
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)


@dataclass(frozen=True)
class CommandPolicy:
    """Which commands may run: all but the blocked ones, or only the allowed ones when given."""

    allowed: tuple[re.Pattern[str], ...] = ()
    blocked: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, allowed: list[str] | None, blocked: list[str] | None) -> CommandPolicy:
        return cls(tuple(map(re.compile, allowed or ())), tuple(map(re.compile, blocked or ())))

    def check(self, command: str) -> None:
        stripped = command.strip()
        for pattern in self.blocked:
            if pattern.match(stripped):
                raise ToolError(f"command refused: it matches the blocked pattern {pattern.pattern!r}")
        if self.allowed and not any(pattern.match(stripped) for pattern in self.allowed):
            patterns = ", ".join(repr(p.pattern) for p in self.allowed)
            raise ToolError(f"command refused: it matches none of the allowed patterns ({patterns})")


def command_tool(workspace: Path, policy: CommandPolicy, max_timeout_s: float) -> Tool:
    """The ``execute_command`` tool, run in ``workspace``; no call may last over ``max_timeout_s``."""

    async def run(arguments: dict[str, Any]) -> str:
        command = argument(arguments, "command", str)
        timeout = float(argument(arguments, "timeout_seconds", (int, float), DEFAULT_TIMEOUT_S))
        policy.check(command)
        return await run_command(command, workspace, min(max(timeout, 1.0), max_timeout_s))

    spec = ToolSpec(
        "execute_command",
        "Run a shell command in your workspace; returns its exit code and output (stdout and stderr).",
        schema(
            {
                "command": {"type": "string"},
                "timeout_seconds": {"type": "number", "description": f"Default {DEFAULT_TIMEOUT_S:g}."},
            },
            ["command"],
        ),
    )
    return Tool(spec, run)


async def run_command(command: str, cwd: Path, timeout_s: float) -> str:
    """Run ``command``; on timeout or cancellation its whole process group is killed."""
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=_clean_environment(),
        umask=user_umask(),  # what a command creates is the user's, with the user's usual mode
    )
    try:
        output = await asyncio.wait_for(_read_all(process), timeout_s)
    except TimeoutError:
        await _kill_group(process)
        raise ToolError(f"timed out after {timeout_s:g}s; the command and its children were killed") from None
    except BaseException:
        await _kill_group(process)
        raise
    return f"exit code: {process.returncode}\n{_head_and_tail(output)}"


async def _read_all(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    data = await process.stdout.read()
    await process.wait()
    return data.decode("utf-8", errors="replace")


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await process.wait()


def _head_and_tail(output: str) -> str:
    if len(output) <= OUTPUT_HEAD_CHARS + OUTPUT_TAIL_CHARS:
        return output
    cut = len(output) - OUTPUT_HEAD_CHARS - OUTPUT_TAIL_CHARS
    note = f"[cut: {cut:,} characters of output not shown]"
    return f"{output[:OUTPUT_HEAD_CHARS]}\n{note}\n{output[-OUTPUT_TAIL_CHARS:]}"


def _clean_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not SECRET_NAME.search(name)}


def require_docker() -> None:
    """Docker mode runs only with the Docker SDK and a daemon that answers; otherwise say so at start."""
    try:
        import docker  # type: ignore[import-untyped, import-not-found, unused-ignore]

        docker.from_env().ping()
    except Exception as error:  # ImportError, or the SDK's errors for a daemon that does not answer
        raise ToolError(
            "command_line_execution_mode 'docker' needs the Docker SDK (`pip install docker`) and a running "
            f"Docker daemon ({type(error).__name__}: {error}); use 'local', or start Docker"
        ) from None
    raise ToolError(
        "command_line_execution_mode 'docker' found a Docker daemon, but running commands in containers is "
        "not built yet; use 'local'"
    )

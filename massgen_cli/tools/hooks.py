"""Running one hook of the config: a command (no shell; the event as JSON on its stdin, its reply as JSON
on its stdout, exit code 2 to deny) or a Python callable by dotted path, within its time limit, and
reading what it replied as a ``HookReply``. What a tool call carries is hostile: it reaches a command
only on stdin, never on its command line."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import os
import shlex
import signal
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from massgen_cli.config.hooks import HookConfig
from massgen_cli.errors import ConfigError

OUTPUT_BYTES = 1_000_000
"""The most of a command's stdout (and of its stderr) that is read; the rest is drained unread."""
DENY_EXIT_CODE = 2


class HookFailed(Exception):
    """A hook that could not decide: it failed, timed out or replied with something unreadable."""


@dataclass(frozen=True)
class HookEvent:
    """What a hook hears, with MassGen's field names (``hook_type``: ``PreToolUse``, ``PostToolUse``,
    ``turn_start`` or ``turn_end``): a command reads it as JSON, a callable gets it as it is."""

    hook_type: str
    session_id: str
    agent_id: str | None = None
    turn: int = 0
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_output: str | None = None
    question: str = ""
    answer: str | None = None
    winner: str | None = None
    status: str = ""
    orchestrator_id: str = ""
    timestamp: str = field(default_factory=lambda: datetime.now(UTC).isoformat())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class HookReply:
    """What a hook decided: deny (with ``reason``), new arguments (``updated_input``), text added to the
    result (``added``) or a result that replaces it (``replaced``); nothing of these: allow."""

    denied: bool = False
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    added: str = ""
    replaced: str | None = None


async def run_hook(hook: HookConfig, event: HookEvent) -> HookReply:
    """``hook``'s reply to ``event``; ``HookFailed`` when it fails, times out or replies unreadably."""
    try:
        async with asyncio.timeout(hook.timeout):
            if hook.command is not None:
                return await _run_command(command_line(hook.command), event)
            return reply_of(await _call(load_callable(hook.handler or ""), event))
    except TimeoutError:
        raise HookFailed(f"timed out after {hook.timeout:g}s") from None
    except HookFailed:
        raise
    except Exception as error:  # a user's callable fails as it will; the run goes on
        raise HookFailed(f"{type(error).__name__}: {error}") from error


def command_line(command: str | list[str]) -> list[str]:
    """The program and its arguments: a list as it is, a string split as a shell would (no shell runs)."""
    return list(command) if isinstance(command, list) else shlex.split(command)


async def _run_command(argv: list[str], event: HookEvent) -> HookReply:
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout stops what it started too
        )
    except OSError as error:
        raise HookFailed(f"cannot start {argv[0]!r}: {error}") from error
    try:
        out, err, _ = await asyncio.gather(
            _read_capped(process.stdout), _read_capped(process.stderr), _feed(process, event.to_json())
        )
        code = await process.wait()
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    return _command_reply(code, out, err)


async def _feed(process: asyncio.subprocess.Process, text: str) -> None:
    """The event on the command's stdin, then end of input (a command that reads none may close it)."""
    stdin = process.stdin
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(text.encode("utf-8"))
        await stdin.drain()
    stdin.close()


async def _read_capped(stream: asyncio.StreamReader | None) -> str:
    """What ``stream`` carries up to ``OUTPUT_BYTES``; the rest is read and dropped, so the command never
    blocks on a full pipe."""
    kept = bytearray()
    while stream is not None and (chunk := await stream.read(65536)):
        kept += chunk[: max(OUTPUT_BYTES - len(kept), 0)]
    return kept.decode("utf-8", errors="replace")


def _command_reply(code: int, out: str, err: str) -> HookReply:
    if code == DENY_EXIT_CODE:
        return HookReply(denied=True, reason=err.strip() or out.strip() or "denied by the hook")
    if code != 0:
        said = (err.strip() or out.strip()).splitlines()
        raise HookFailed(f"exited with code {code}" + (f": {said[-1]}" if said else ""))
    if not out.strip():
        return HookReply()
    try:
        return reply_of(json.loads(out))
    except json.JSONDecodeError as error:
        raise HookFailed(f"its output is not JSON: {error}") from error


def load_callable(dotted: str) -> Callable[..., Any]:
    """The callable ``package.module.function`` (or ``package.module:function``) names; a
    ``ConfigError`` saying why when it cannot be imported."""
    module_name, _, name = dotted.replace(":", ".").rpartition(".")
    if not module_name:
        raise ConfigError(f"hook handler {dotted!r}: give a dotted path, package.module.function")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"hook handler {dotted!r} cannot be imported: {error}") from error
    if not callable(found):
        raise ConfigError(f"hook handler {dotted!r} is not callable")
    return found


async def _call(function: Callable[..., Any], event: HookEvent) -> Any:
    """An async callable awaited; a plain one run on a thread (so a slow one holds no agent)."""
    if inspect.iscoroutinefunction(function):
        return await function(event)
    returned = await asyncio.to_thread(function, event)
    return await returned if inspect.isawaitable(returned) else returned


def reply_of(value: Any) -> HookReply:
    """A hook's reply read as MassGen's ``HookResult`` (or a mapping of its fields) and as Claude Code's
    hook output (``decision: block``, ``hookSpecificOutput``): None allows."""
    if value is None:
        return HookReply()
    fields = value if isinstance(value, Mapping) else _attributes(value)
    if not isinstance(fields, Mapping):
        raise HookFailed(f"replied {type(value).__name__}, not a mapping or a HookResult")
    specific = fields.get("hookSpecificOutput") or {}
    decision = str(fields.get("decision") or specific.get("permissionDecision") or "allow").lower()
    denied = decision in ("deny", "block") or fields.get("allowed") is False
    reason = fields.get("reason") or specific.get("permissionDecisionReason") or ""
    inject = fields.get("inject") or {}
    added = [
        str(text)
        for text in (
            inject.get("content"),
            fields.get("additional_context"),
            specific.get("additionalContext"),
        )
        if text
    ]
    replaced = fields.get("updated_output", specific.get("updatedMCPToolOutput"))
    return HookReply(
        denied=denied,
        reason=str(reason),
        updated_input=_new_input(fields, specific),
        added="\n".join(added),
        replaced=None if replaced is None else str(replaced),
    )


def _attributes(value: Any) -> Mapping[str, Any] | None:
    names = ("allowed", "decision", "reason", "updated_input", "modified_args", "inject", "updated_output")
    found = {name: getattr(value, name) for name in names if hasattr(value, name)}
    return found or None


def _new_input(fields: Mapping[str, Any], specific: Mapping[str, Any]) -> dict[str, Any] | None:
    """New arguments: ``updated_input`` (``updatedInput``), or MassGen's ``modified_args`` (JSON text)."""
    updated = fields.get("updated_input") or fields.get("updatedInput") or specific.get("updatedInput")
    if updated is None and isinstance(fields.get("modified_args"), str):
        try:
            updated = json.loads(fields["modified_args"])
        except json.JSONDecodeError as error:
            raise HookFailed(f"modified_args is not JSON: {error}") from error
    if updated is not None and not isinstance(updated, dict):
        raise HookFailed("updated_input must be a mapping of the tool's arguments")
    return updated

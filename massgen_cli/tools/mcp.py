"""MCP servers through the official ``mcp`` SDK's client session: each server runs once per run (shared
by the turns of a session and by every agent that names it), its tools are offered as
``mcp__<server>__<tool>`` with the schemas it lists, and a call's error comes back as a tool result. A
server that fails to start, or dies, is reported with the tail of its stderr; the run goes on without
it. A stdio server runs over our own transport (``mcp_stdio``: answers cut at ``max_result_bytes``,
stray stdout lines counted, the server killed with the runner); a streamable-http one over the SDK's,
with an HTTP client that cuts answers the same way (``mcp_http``).

Transports are async context managers that must be entered and left in one task, so each server lives
in a task of its own until ``stop``; a start that times out cancels that task, which kills the server
at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import IO, Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.config.extra_tools import McpServerConfig
from massgen_cli.events import Notice, RunEvent
from massgen_cli.tools.base import Tool, ToolError
from massgen_cli.tools.mcp_lines import CUT_META_KEY, OutputWatch, too_long
from massgen_cli.tools.sandbox import Mount, SandboxSpec

PREFIX = "mcp__"
STDERR_TAIL_CHARS = 1500
STOP_TIMEOUT_S = 5.0
"""How long a stopping server's task may take (a polite stop is bounded well under it) before it is
cancelled, which kills the server at once."""
CANCEL_WAIT_S = 2.0
"""How long a cancelled server's task may take to finish (the server is killed before it awaits)."""
TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
WORKSPACE_PLACEHOLDER = "${cwd}"
SDK_FAILURE_PREFIX = "Error executing tool"
"""How a server written with the ``mcp`` SDK starts the text of a failed call (``<prefix> <tool>: <why>``)."""
SSE_TOO_LONG = "Server-sent event exceeded the"
"""How the SDK's HTTP client says an answer sent as an event was longer than its limit."""
WITHHELD_REASON = (
    "a server written with the mcp SDK sends the message of its ToolError but keeps that of any other "
    "exception to itself"
)


class McpServer:
    """One running server: its session and tools while it runs, and what went wrong if it stops."""

    def __init__(self, config: McpServerConfig, workspace: Path, notice: Callable[[str], None] | None = None):
        self.config = config
        self.workspace = workspace
        self.watch = OutputWatch(config.name, config.max_result_bytes, notice or (lambda _: None))
        self.tools: list[Any] = []
        self.error = ""
        self.lost = ""
        self._session: Any = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # The server's stderr, open for its whole life (read for error reports); closed by ``McpHub.close``.
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        alive = self._task is not None and not self._task.done() and not self.lost
        return alive and self._session is not None

    async def start(self) -> bool:
        """Start the server and list its tools; False (with ``error`` set) when it did not come up."""
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.name}")
        ready = asyncio.create_task(self._ready.wait())
        timeout = self.config.startup_timeout_seconds
        done, _ = await asyncio.wait(
            {self._task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        ready.cancel()
        if self._ready.is_set():
            return True
        self.error = (
            f"did not start within {timeout:g}s" if not done else f"failed to start: {self._failure()}"
        )
        await self._cancel()
        self.error += self._stdout_note() + self.stderr_tail()
        return False

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The text of a tool's result; a ``ToolError`` for a tool error or a server that is not running."""
        if not self.running:
            raise ToolError(f"MCP server '{self.name}' is not running{self._why()}")
        try:
            result = await self._session.call_tool(tool, arguments)
        except Exception as error:  # the SDK's errors, or a connection lost mid-call
            raise ToolError(self._call_failure(tool, error)) from None
        if getattr(result, "is_error", False) and not _was_cut(result):
            raise ToolError(failure_text(tool, result_text(result)))
        return result_text(result)

    async def stop(self) -> None:
        """Leave the session and stop the server (its whole process group), within ``STOP_TIMEOUT_S``."""
        self._stop.set()
        if self._task is not None and not self._task.done():
            done, _ = await asyncio.wait({self._task}, timeout=STOP_TIMEOUT_S)
            if not done:
                await self._cancel()
        self._session = None

    def stderr_tail(self) -> str:
        """The end of the server's stderr, read without moving the offset the server writes at."""
        descriptor = self.stderr.fileno()
        size = os.fstat(descriptor).st_size
        start = max(0, size - 4 * STDERR_TAIL_CHARS)
        text = os.pread(descriptor, size - start, start).decode("utf-8", errors="replace").strip()
        return f"; stderr: …{text[-STDERR_TAIL_CHARS:]}" if text else ""

    async def _cancel(self) -> None:
        """Cancel the server's task: its transport kills the server at once."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=CANCEL_WAIT_S)
        self._session = None

    async def _serve(self) -> None:
        from mcp import ClientSession

        async with self._transport() as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            self.tools = await _all_tools(session)
            self._session = session
            self._ready.set()
            await self._stop.wait()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        config = self.config
        if config.type == "stdio":
            from mcp.client.stdio import get_default_environment

            from massgen_cli.tools.mcp_stdio import StdioCommand, bounded_stdio

            args = [arg.replace(WORKSPACE_PLACEHOLDER, str(self.workspace)) for arg in config.args]
            program, cwd = [str(config.command), *args], config.cwd
            if config.sandbox:
                program, cwd = sandboxed_server(config, program)
            command = StdioCommand(program, {**get_default_environment(), **config.env}, cwd)
            async with bounded_stdio(command, self.stderr, self.watch) as streams:
                yield streams
        else:
            from mcp.client.streamable_http import streamable_http_client

            from massgen_cli.tools.mcp_http import bounded_http_client

            events_up_to = 2 * config.max_result_bytes  # a cut answer is a little over the limit
            async with (
                bounded_http_client(config.headers, self.watch) as client,
                streamable_http_client(
                    str(config.url), http_client=client, max_sse_event_size=events_up_to
                ) as streams,
            ):
                yield streams

    def _call_failure(self, tool: str, error: Exception) -> str:
        """What the model reads of an exception from a call: the server's own error (a JSON-RPC error
        the tool raised, in full), an answer over the size limit, or the server gone or failing, with
        why. Over HTTP a closed connection ends one request, not the server."""
        if SSE_TOO_LONG in str(error):
            return f"{tool} failed: {too_long(self.config.max_result_bytes)}"
        if _connection_closed(error) and self.config.type == "stdio":
            self.lost = str(error)  # the server is gone: no call reaches it any more
            self._stop.set()
        elif _error_from_server(error):
            return failure_text(tool, str(error))
        return f"MCP server '{self.name}' failed: {str(error) or type(error).__name__}{self._why()}"

    def _failure(self) -> str:
        error = self._task.exception() if self._task is not None and not self._task.cancelled() else None
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        return f"{type(error).__name__}: {error}" if error is not None else "it exited"

    def _why(self) -> str:
        if self.lost:
            return f" ({self.lost}){self._stdout_note()}{self.stderr_tail()}"
        if self._task is not None and self._task.done():
            return f" ({self._failure()}){self._stdout_note()}{self.stderr_tail()}"
        return ""

    def _stdout_note(self) -> str:
        count = self.watch.unreadable_lines
        return f"; it wrote {count:,} lines on stdout that were not JSON-RPC" if count else ""


def sandboxed_server(config: McpServerConfig, program: list[str]) -> tuple[list[str], str]:
    """``program`` wrapped in the sandbox: its folder (``cwd``, default mcp_workspaces/<name>, created)
    writable; its program's install (a virtualenv and the interpreter behind it) and the paths named in
    its arguments (made absolute) readable; the runner's folder hidden."""
    folder = Path(config.cwd or Path("mcp_workspaces") / config.name).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    arguments = [_absolute_if_present(arg) for arg in program[1:]]
    readable = {Path(arg) for arg in arguments if Path(arg).is_absolute() and Path(arg).exists()}
    readable |= _install_of(program[0])
    mounts = (*(Mount(path, False) for path in readable if path != folder), Mount(folder, True))
    spec = SandboxSpec(mounts, folder, (Path.cwd(),), config.sandbox_network)
    return spec.command([program[0], *arguments]), str(folder)


def _absolute_if_present(argument: str) -> str:
    """An argument naming an existing path, relative to the runner's folder, made absolute (the server
    runs in its own folder)."""
    path = Path(argument).expanduser()
    if argument.startswith("-") or path.is_absolute() or not path.exists():
        return argument
    return str(path.resolve())


def _install_of(command: str) -> set[Path]:
    """The folders a program needs to run: its virtualenv (beside pyvenv.cfg) and the prefix of the
    program its name resolves to."""
    found = shutil.which(command)
    if found is None:
        return set()
    folders = {Path(found).resolve().parent.parent}
    if (Path(found).parent.parent / "pyvenv.cfg").exists():
        folders.add(Path(found).parent.parent.resolve())
    return {folder for folder in folders if folder != Path("/")}


def _was_cut(result: Any) -> bool:
    """Whether a result is one this client cut at ``max_result_bytes`` (the model reads it as the
    tool's result, with the note of the cut)."""
    return CUT_META_KEY in (getattr(result, "meta", None) or {})


def _connection_closed(error: Exception) -> bool:
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(error, MCPError) and error.code == CONNECTION_CLOSED


def _error_from_server(error: Exception) -> bool:
    from mcp import MCPError

    return isinstance(error, MCPError)


def failure_text(tool: str, text: str) -> str:
    """A failed call as the model reads it: ``<tool> failed: <the server's error text>``, in full, less
    the ``Error executing tool <tool>: `` the SDK's servers put before it; a word on a missing reason."""
    generic = f"{SDK_FAILURE_PREFIX} {tool}"
    reason = text.strip().removeprefix(f"{generic}:").strip()
    if reason == generic:
        return f"{tool} failed; the server gave no reason, only '{generic}' ({WITHHELD_REASON})"
    return f"{tool} failed: {reason}" if reason else f"{tool} failed; the server gave no reason"


async def _all_tools(session: Any) -> list[Any]:
    """Every tool the server lists, page by page."""
    from mcp.types import PaginatedRequestParams

    tools, cursor = [], None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


def result_text(result: Any) -> str:
    """A call result as text: its text parts, a line for other parts, else its structured content."""
    parts = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(getattr(block, "resource", None), "text"):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{kind or 'content'}: {getattr(block, 'mime_type', '') or 'binary'}]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return "\n".join(parts)


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` in the characters providers accept, at most 64 long."""
    return TOOL_NAME.sub("_", f"{PREFIX}{server}__{tool}")[:MAX_TOOL_NAME]


class McpHub:
    """The servers of one run, started on first use and shared; ``close`` stops them all."""

    def __init__(self, emit: Callable[[RunEvent], None]):
        self.emit = emit
        self.servers: dict[str, McpServer] = {}
        self._starting: dict[str, asyncio.Task[bool]] = {}

    async def tools(
        self,
        configs: Sequence[McpServerConfig],
        workspace: Path,
        allowed: Sequence[str] | None = None,
        excluded: Sequence[str] = (),
    ) -> list[Tool]:
        """The tools of ``configs``' servers (started if need be), filtered by ``allowed``/``excluded``."""
        servers = await asyncio.gather(*(self._server(config, workspace) for config in configs))
        tools: dict[str, Tool] = {}
        for server in servers:
            for tool in server.tools if server.running else []:
                name = tool_name(server.name, tool.name)
                if not _wanted(name, tool.name, allowed, excluded):
                    continue
                if name in tools:
                    self.emit(Notice("warning", f"MCP tool {name} is offered twice; the second is left out"))
                    continue
                tools[name] = _as_tool(server, tool, name)
        return list(tools.values())

    async def close(self) -> None:
        """Stop every server (no process is left behind)."""
        servers = list(self.servers.values())
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)
        for server in servers:
            server.stderr.close()
        self.servers.clear()
        self._starting.clear()

    async def _server(self, config: McpServerConfig, workspace: Path) -> McpServer:
        key = json.dumps([config.model_dump(), str(workspace) if _uses_workspace(config) else ""])
        if key not in self._starting:
            server = self.servers[key] = McpServer(config, workspace, self._warn)
            self._starting[key] = asyncio.create_task(self._start(server))
        await self._starting[key]
        return self.servers[key]

    def _warn(self, text: str) -> None:
        self.emit(Notice("warning", text))

    async def _start(self, server: McpServer) -> bool:
        if await server.start():
            self.emit(Notice("info", f"MCP server '{server.name}' started: {len(server.tools)} tools"))
            return True
        # degraded: the run goes on without what the config asked for (said even with -q)
        self.emit(Notice("degraded", f"MCP server '{server.name}' {server.error}; going on without it"))
        return False


def _uses_workspace(config: McpServerConfig) -> bool:
    return any(WORKSPACE_PLACEHOLDER in arg for arg in config.args)


def _wanted(name: str, own_name: str, allowed: Sequence[str] | None, excluded: Sequence[str]) -> bool:
    if name in excluded or own_name in excluded:
        return False
    return allowed is None or name in allowed or own_name in allowed


def _as_tool(server: McpServer, tool: Any, name: str) -> Tool:
    async def run(arguments: dict[str, Any]) -> str:
        return await server.call(tool.name, arguments)

    schema = dict(tool.input_schema or {"type": "object", "properties": {}})
    schema.pop("title", None)
    description = tool.description or f"The {tool.name} tool of the MCP server '{server.name}'."
    return Tool(ToolSpec(name, description, schema), run)

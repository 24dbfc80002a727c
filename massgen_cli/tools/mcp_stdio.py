"""The stdio transport of MCP servers: the same pair of message streams as the SDK's ``stdio_client``
(what ``ClientSession`` takes), with bounds the SDK's lacks.

- Bounded answers: stdout is read in chunks and each line kept only up to the server's
  ``max_result_bytes`` (``mcp_lines``); an oversized answer becomes a valid answer for the same
  request, the start of its text and a note of the cut, and the rest is never held in memory.
- Quiet junk: a line that is not a JSON-RPC message is reported once (a notice with its start), then
  only counted; never a traceback per line.
- No orphans: the server runs in a process group of its own, behind the reaper that has the kernel kill
  it when the runner dies (even by SIGKILL, ``reaper``); stopping it closes its stdin, waits
  ``STOP_GRACE_S`` at most, then kills the whole group. Leaving on an error or a cancellation (a start
  that timed out) kills the group at once, before anything is awaited."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import IO, Any

import anyio
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from massgen_cli.tools.mcp_lines import MISSING, Line, LineSplitter, OutputWatch, cut_answer, read_oversized
from massgen_cli.tools.reaper import reaped

CHUNK_BYTES = 64 * 1024
STOP_GRACE_S = 2.0
"""How long a server whose stdin was closed may take to exit on its own before its group is killed."""
REAP_WAIT_S = 2.0
"""How long to wait for a killed server to be seen gone (only an unkillable process takes it all)."""
_EXIT_POLL_S = 0.01
_PIPE_ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


@dataclass(frozen=True)
class StdioCommand:
    """How to run one server: its program and arguments, environment and folder."""

    program: list[str]
    env: dict[str, str]
    cwd: str | None = None


@contextlib.asynccontextmanager
async def bounded_stdio(
    command: StdioCommand, stderr: IO[Any], watch: OutputWatch
) -> AsyncIterator[tuple[Any, Any]]:
    """Run the server and yield ``(read_stream, write_stream)`` for ``ClientSession``; stop it (and all
    its process group) on leaving."""
    process = await anyio.open_process(
        reaped(command.program),
        env=command.env,
        cwd=command.cwd,
        stderr=stderr,
        start_new_session=True,
    )
    channel = _Channel(process, watch)
    async with anyio.create_task_group() as group:
        group.start_soon(channel.read)
        group.start_soon(channel.write)
        polite = False
        try:
            yield channel.read_stream, channel.write_stream
            polite = True
        finally:
            await channel.stop(polite)
            group.cancel_scope.cancel()


class _Channel:
    """The server process and the message streams between it and the session."""

    def __init__(self, process: Process, watch: OutputWatch):
        self.process = process
        self.watch = watch
        self.splitter = LineSplitter(watch.limit)
        self.pending: dict[Any, str] = {}
        """The method of each request sent and not yet answered, by id (what a cut answer stands for)."""
        # Of SessionMessage (and, to the session, an Exception), as the SDK's transports.
        self.to_session: MemoryObjectSendStream[Any]
        self.read_stream: MemoryObjectReceiveStream[Any]
        self.to_session, self.read_stream = anyio.create_memory_object_stream[Any](0)
        self.write_stream: MemoryObjectSendStream[Any]
        self.from_session: MemoryObjectReceiveStream[Any]
        self.write_stream, self.from_session = anyio.create_memory_object_stream[Any](0)

    async def read(self) -> None:
        """Hand the session each message of stdout until the server closes it; then close the session's
        stream (a call waiting for an answer fails as a lost connection)."""
        assert self.process.stdout is not None
        async with self.to_session:
            with contextlib.suppress(*_PIPE_ENDED):
                while True:
                    chunk = await self.process.stdout.receive(CHUNK_BYTES)
                    for line in self.splitter.feed(chunk):
                        message = self._message(line)
                        if message is not None:
                            await self.to_session.send(message)
        await self._drain()

    async def write(self) -> None:
        """Send the session's messages to the server's stdin, one JSON line each."""
        from mcp_types import JSONRPCRequest

        assert self.process.stdin is not None
        try:
            async with self.from_session:
                async for session_message in self.from_session:
                    message = session_message.message
                    if isinstance(message, JSONRPCRequest):
                        self.pending[message.id] = message.method
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await self.process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.to_session.aclose()  # the server no longer reads: the session sees the end

    async def stop(self, polite: bool) -> None:
        """Stop the server: politely (stdin closed, ``STOP_GRACE_S`` to exit), else at once; either way
        its whole process group is killed, then the pipes closed. Bounded, and not cut short by a
        cancellation."""
        try:
            if polite:
                with anyio.CancelScope(shield=True):
                    self.read_stream.close()
                    await _close(self.process.stdin)
                    await self._exited(STOP_GRACE_S)
        finally:
            self._kill_group()
            with anyio.CancelScope(shield=True):
                await self._exited(REAP_WAIT_S)
                for stream in (self.process.stdin, self.process.stdout, self.read_stream, self.write_stream):
                    await _close(stream)
                _close_transport(self.process)

    def _message(self, line: Line) -> Any:
        """The session's message for one line of stdout, or None for a line to leave out."""
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCError, JSONRPCResponse, jsonrpc_message_adapter

        if line.cut:
            return self._cut_message(line)
        if not line.head.strip():
            return None
        try:
            message = jsonrpc_message_adapter.validate_json(bytes(line.head), by_name=False)
        except ValueError:
            self.watch.unreadable(line)
            return None
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.pending.pop(message.id, None)
        return SessionMessage(message)

    def _cut_message(self, line: Line) -> Any:
        """An oversized line as an answer to its request (by its id, or the only request waiting); an
        oversized message that answers nothing is left out, and counted as unreadable."""
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        found = read_oversized(line)
        is_answer, request_id = found.cut_key in ("result", "error"), found.id
        if is_answer and request_id is MISSING and len(self.pending) == 1:
            request_id = next(iter(self.pending))
        if not is_answer or request_id is MISSING or request_id not in self.pending:
            self.watch.unreadable(line)
            return None
        method = self.pending.pop(request_id)
        self.watch.cut(line, method)
        answer = cut_answer(line, self.watch.limit, request_id, method, found)
        return SessionMessage(jsonrpc_message_adapter.validate_python(answer, by_name=False))

    async def _drain(self) -> None:
        """Read and drop what the server still writes once the session is gone, so it never blocks on
        a full pipe while it is being stopped."""
        assert self.process.stdout is not None
        with contextlib.suppress(*_PIPE_ENDED):
            while True:
                await self.process.stdout.receive(CHUNK_BYTES)

    async def _exited(self, within_s: float) -> bool:
        """Whether the server exited within ``within_s`` (its exit code, not its pipes: a child that
        inherited them must not make an exited server look alive)."""
        deadline = anyio.current_time() + within_s
        while self.process.returncode is None:
            if anyio.current_time() >= deadline:
                return False
            await anyio.sleep(_EXIT_POLL_S)
        return True

    def _kill_group(self) -> None:
        """SIGKILL the server's process group (it leads it), which holds whatever it started."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


async def _close(stream: Any) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.aclose()


def _close_transport(process: Process) -> None:
    """Close asyncio's transport of the process now (it would warn when collected while a survivor
    still holds a pipe)."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()

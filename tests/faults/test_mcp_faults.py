"""MCP servers that misbehave, for real: a server written with the SDK (tests/servers/mcp_fault_server.py)
run as a subprocess answers a tool call with 50 MB, writes lines that are not JSON-RPC on stdout, never
answers its start, or outlives a runner killed by SIGKILL. Each time the run is bounded in time and
memory, says once what happened, and leaves no server process behind."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from massgen_cli.config.extra_tools import McpServerConfig
from massgen_cli.events import Notice, ToolCall
from massgen_cli.tools.base import RESULT_CHARS
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.mcp_lines import MISSING, Line, LineSplitter, read_oversized
from massgen_cli.tools.mcp_stdio import STOP_GRACE_S
from massgen_cli.tools.toolbox import Toolbox
from tests.conftest import process_gone, wait_until

SERVERS = Path(__file__).resolve().parents[1] / "servers"
SERVER = str(SERVERS / "mcp_fault_server.py")
HOLDER = str(SERVERS / "mcp_holder.py")
FIFTY_MB = 50_000_000


def fault_server(*args: str, **fields: object) -> McpServerConfig:
    return McpServerConfig(name="faults", command=sys.executable, args=[SERVER, *args], **fields)


class Hub:
    """A hub, the notices it emitted, and a toolbox of its tools."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.hub = McpHub(self._record)

    def _record(self, event: object) -> None:
        if isinstance(event, Notice):
            self.notices.append(event.message)

    async def box(self, config: McpServerConfig) -> Toolbox:
        tools = await self.hub.tools([config], Path.cwd())
        return Toolbox({tool.name: tool for tool in tools}, call_timeout_s=60)

    def about(self, words: str) -> list[str]:
        return [notice for notice in self.notices if words in notice]


async def call(box: Toolbox, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return await box.run(ToolCall("c", name, dict(arguments)))


def memory_kb(field: str) -> int:
    """A figure of this process's memory from /proc/self/status (VmRSS, VmHWM), in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def reset_peak_memory() -> None:
    """Make VmHWM start again from the current RSS (Linux's clear_refs), so the peak measured is this
    test's own."""
    Path("/proc/self/clear_refs").write_text("5")


def test_a_50_mb_result_is_cut_while_it_arrives_and_the_server_goes_on():
    """The call returns with the start of the text and a note of the bytes sent and kept; this process's
    peak memory grows by a few MB, not by the 50 MB (twice over, with the structured copy) sent."""
    run = Hub()

    async def scenario() -> tuple[float, int]:
        try:
            box = await run.box(fault_server())
            reset_peak_memory()
            before_kb, began = memory_kb("VmRSS"), time.monotonic()
            result = await call(box, "mcp__faults__big", size=FIFTY_MB)
            took_s, growth_kb = time.monotonic() - began, memory_kb("VmHWM") - before_kb
            assert result.ok, result.text
            assert result.text.startswith("[The result was cut: the server sent 1"), result.text[:400]
            assert "max_result_bytes (1,000,000)" in result.text and "\n\nBEGINxxxx" in result.text
            assert len(result.text) <= RESULT_CHARS  # and what the model reads is bounded as any result
            assert (await call(box, "mcp__faults__add", a=2, b=3)).text == "5", "the stream is in step"
            return took_s, growth_kb
        finally:
            await run.hub.close()

    took_s, growth_kb = asyncio.run(scenario())
    print(f"50 MB result: {took_s:.2f}s, peak RSS growth {growth_kb / 1024:.1f} MB")
    assert growth_kb < 20 * 1024, f"peak RSS grew by {growth_kb / 1024:.1f} MB"
    (notice,) = run.about("max_result_bytes")
    print(notice)
    assert "answered tools/call with 1" in notice


def test_lines_that_are_not_json_rpc_are_told_once_and_counted(capfd: pytest.CaptureFixture[str]):
    """A banner of 3,000 lines before the server speaks and 5,000 more in the middle of a call: one
    warning naming the server with the first line's start, no traceback, and the tools keep working."""
    run = Hub()

    async def scenario() -> int:
        try:
            box = await run.box(fault_server("--junk", "3000"))
            assert (await call(box, "mcp__faults__chatter", lines=5000)).text == "done"
            assert (await call(box, "mcp__faults__add", a=1, b=1)).text == "2"
            return run.hub.servers[next(iter(run.hub.servers))].watch.unreadable_lines
        finally:
            await run.hub.close()

    counted = asyncio.run(scenario())
    (warning,) = run.about("not a JSON-RPC message")
    assert "MCP server 'faults'" in warning and "Starting faults server, step 0" in warning
    assert len(warning) < 500
    assert counted == 8000
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err and len(printed.err) < 2000, printed.err[:2000]


def test_a_server_that_never_starts_is_stopped_within_its_timeout(tmp_path: Path):
    """The start gives up at startup_timeout_seconds and kills the server and its child (which ignore
    SIGTERM) before it returns; the run goes on without it."""
    pid_file = tmp_path / "pids"
    run = Hub()
    config = fault_server("--stall", env={"PID_FILE": str(pid_file)}, startup_timeout_seconds=2.0)

    async def scenario() -> float:
        try:
            began = time.monotonic()
            box = await run.box(config)
            took_s = time.monotonic() - began
            assert box.tools == {}
            return took_s
        finally:
            await run.hub.close()

    took_s = asyncio.run(scenario())
    print(f"start with a 2s timeout returned after {took_s:.2f}s")
    # it waited its timeout, and then killed at once: a polite stop would have added STOP_GRACE_S
    assert 2.0 <= took_s < 2.0 + STOP_GRACE_S
    (warning,) = run.about("did not start within 2s")
    assert "going on without it" in warning
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert len(pids) == 2, "the server and its child had started"
    # Both ignore SIGTERM, so only the kill ends them: waiting for that state (not a fixed time) tells it.
    assert all(process_gone(pid) for pid in pids)


def test_a_runner_killed_by_sigkill_leaves_no_server_behind(tmp_path: Path):
    """The server was told to outlive its stdin (so the closed pipe alone would not end it); the kernel
    kills it when its holder is SIGKILLed."""
    pid_file = tmp_path / "server.pid"
    holder = subprocess.Popen([sys.executable, HOLDER, SERVER, str(pid_file)])
    try:
        wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), within_s=60)
        server_pid = int(pid_file.read_text())
        assert not process_gone(server_pid, within_s=0), "the server runs while its holder does"
        first = _parent(server_pid)  # the reaper starts the server behind a first process of their own
        assert os.getpgid(server_pid) == _parent(first) != holder.pid, "a process group of its own"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    gone = process_gone(server_pid, within_s=5)
    if not gone:
        os.kill(server_pid, signal.SIGKILL)  # not left behind by a failing test either
    assert gone


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("mode", [[], ["--json"]], ids=["events", "json"])
def test_an_oversized_answer_over_http_is_cut_too(mode: list[str]):
    """Over streamable HTTP, with answers sent as server-sent events (the SDK's default) or as JSON."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port), *mode],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    run = Hub()
    remote = McpServerConfig(name="faults", type="streamable-http", url=f"http://127.0.0.1:{port}/mcp")

    async def scenario() -> None:
        try:
            box = await run.box(remote)
            result = await call(box, "mcp__faults__big", size=5_000_000)
            assert result.ok, result.text[:200]
            assert result.text.startswith("[The result was cut: the server sent 1"), result.text[:200]
            assert "\n\nBEGINxxxx" in result.text and len(result.text) <= RESULT_CHARS
            assert (await call(box, "mcp__faults__add", a=2, b=3)).text == "5"
        finally:
            await run.hub.close()

    try:
        wait_until(lambda: listening(port), within_s=60)
        asyncio.run(scenario())
    finally:
        server.kill()
        server.wait(10)
    assert len(run.about("answered tools/call with 1")) == 1


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def oversized(text: str, limit: int) -> Line:
    (line,) = LineSplitter(limit).feed(text.encode() + b"\n")
    assert line.cut
    return line


def test_the_id_is_read_before_or_after_the_cut_result():
    """JSON key order differs between SDKs: the id may come first or last."""
    body = json.dumps({"content": [{"type": "text", "text": "é" * 5000}]}, ensure_ascii=False)
    id_first = f'{{"jsonrpc":"2.0","id":7,"result":{body}}}'
    for text in (id_first, f'{{"result":{body},"jsonrpc":"2.0","id":7}}'):
        found = read_oversized(oversized(text, 2001))
        assert (found.id, found.cut_key) == (7, "result")
        assert found.text and set(found.text) == {"é"}, "the start is decoded, a split character left out"
    assert read_oversized(oversized('{"result":{"a":"' + "x" * 9000 + '"}}', 100)).id is MISSING


def test_a_text_cut_inside_an_escape_keeps_what_is_whole():
    start = '{"id":"r1","result":{"content":[{"type":"text","text":"abcd'
    for escape, whole in (("\\u00e9", "é"), ('\\"', '"'), ("\\\\", "\\")):
        text = (start + escape * 40 + '"}]}}\n').encode()
        for cut in range(1, len(escape)):
            (line,) = LineSplitter(len(start) + cut).feed(text)
            found = read_oversized(line)
            assert (found.id, found.text) == ("r1", "abcd"), (escape, cut)
        (line,) = LineSplitter(len(start) + len(escape)).feed(text)
        assert read_oversized(line).text == "abcd" + whole

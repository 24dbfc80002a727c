"""MCP servers for real: a stdio server written in the suite with the SDK's server side, and the same
server over streamable HTTP on 127.0.0.1. Listing, calls, errors, timeouts, a server that crashes at
start and one that dies mid-run, filters, names across servers, sharing, and shutdown by PID."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from massgen_cli.config.extra_tools import McpServerConfig
from massgen_cli.events import Notice, ToolCall
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.toolbox import Toolbox
from tests.conftest import process_gone
from tests.scripted import scripted

SERVER = str(Path(__file__).with_name("servers") / "mcp_test_server.py")


def stdio(name: str = "notes", **fields: object) -> McpServerConfig:
    return McpServerConfig(
        name=name, type="stdio", command=sys.executable, args=[SERVER, "--name", name], **fields
    )


class Run:
    """A hub and the notices it emitted, on one event loop."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.hub = McpHub(
            lambda event: self.notices.append(event.message) if isinstance(event, Notice) else None
        )

    async def box(self, *configs: McpServerConfig, timeout_s: float = 30.0, **filters: object) -> Toolbox:
        tools = await self.hub.tools(list(configs), Path.cwd(), **filters)  # type: ignore[arg-type]
        return Toolbox({tool.name: tool for tool in tools}, call_timeout_s=timeout_s)


def with_hub(scenario: Callable[[Run], Awaitable[None]]) -> None:
    """Run ``scenario`` with a fresh hub, whose servers are stopped afterwards whatever happens."""

    async def go() -> None:
        run = Run()
        try:
            await scenario(run)
        finally:
            await run.hub.close()

    asyncio.run(go())


async def call(box: Toolbox, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return await box.run(ToolCall("c", name, dict(arguments)))


def test_tools_are_listed_with_their_schemas_and_called():
    async def scenario(run: Run) -> None:
        box = await run.box(stdio(env={"GREETING": "hello from the config"}))
        assert set(box.tools) >= {"mcp__notes__add", "mcp__notes__refuse", "mcp__notes__hang"}
        add = box.tools["mcp__notes__add"].spec
        assert add.description == "Add two whole numbers."
        assert add.parameters["required"] == ["a", "b"]
        assert (await call(box, "mcp__notes__add", a=2, b=3)).text == "5"
        assert (await call(box, "mcp__notes__greeting")).text == "hello from the config"
        bad = await call(box, "mcp__notes__add", a="two", b=3)
        assert not bad.ok and bad.text.startswith("Error: add failed: 1 validation error for addArguments")
        assert any("MCP server 'notes' started" in notice for notice in run.notices)

    with_hub(scenario)


def test_a_tool_error_reaches_the_model_with_the_servers_text():
    """The SDK's ToolError and a JSON-RPC error come back in full and fail the call; an exception the SDK
    keeps to itself is said to have been kept; the server goes on serving."""

    async def scenario(run: Run) -> None:
        box = await run.box(stdio())
        missing = await call(box, "mcp__notes__count_defs", path="x")
        assert (missing.ok, missing.text) == (False, "Error: count_defs failed: no such file: x")
        protocol = await call(box, "mcp__notes__lookup", key="k")
        assert (protocol.ok, protocol.text) == (False, "Error: lookup failed: unknown key: k")
        crash = await call(box, "mcp__notes__refuse", reason="no such file: x")
        assert not crash.ok
        assert crash.text.startswith("Error: refuse failed; the server gave no reason, only ")
        assert "'Error executing tool refuse'" in crash.text and "ToolError" in crash.text
        assert (await call(box, "mcp__notes__add", a=1, b=1)).text == "2"

    with_hub(scenario)


def test_the_next_request_carries_the_servers_error_text(in_process):
    """In a turn, the failed call's result (with the server's text) is what the agent's next request
    gives the model."""
    config = scripted(
        {"a": [{"tool": "mcp__notes__count_defs", "args": {"path": "x"}}, "There is no file x."]},
        backends={"a": {"mcp_servers": [stdio().model_dump(include={"name", "command", "args"})]}},
    )
    run = in_process(config)
    assert run.app.ask("How many functions does x define?").final_answer == "There is no file x."
    first, second = run.requests("a")[:2]
    assert first.offers_tool("mcp__notes__count_defs")
    (result,) = [message for message in second.messages if message["role"] == "tool"]
    assert result["content"] == "Error: count_defs failed: no such file: x"
    summary = json.loads(
        (Path(run.app.run_log.directory) / "turn_1" / "attempt_1" / "summary.json").read_text()
    )
    assert summary["tool_calls"] == {"a": {"calls": 1, "failed": 1}}, "the call is counted as failed"


def test_a_slow_call_times_out_and_the_server_keeps_working():
    async def scenario(run: Run) -> None:
        box = await run.box(stdio(), timeout_s=1.0)
        slow = await call(box, "mcp__notes__hang")
        assert not slow.ok and "took longer than 1s" in slow.text
        assert (await call(box, "mcp__notes__add", a=1, b=1)).text == "2"

    with_hub(scenario)


def test_a_server_that_crashes_at_start_is_reported_with_its_stderr_and_skipped():
    crash = McpServerConfig(
        name="broken",
        command=sys.executable,
        args=["-c", "import sys; sys.stderr.write('boom: no such module notes_db\\n'); sys.exit(3)"],
    )

    async def scenario(run: Run) -> None:
        box = await run.box(crash, stdio())
        assert not any(name.startswith("mcp__broken__") for name in box.tools)
        assert "mcp__notes__add" in box.tools
        (warning,) = [n for n in run.notices if "broken" in n]
        assert "going on without it" in warning and "boom: no such module notes_db" in warning

    with_hub(scenario)


def test_a_server_that_dies_mid_run_becomes_a_tool_error():
    async def scenario(run: Run) -> None:
        box = await run.box(stdio())
        died = await call(box, "mcp__notes__die")
        assert not died.ok and "fatal: the notes index is corrupt" in died.text
        after = await call(box, "mcp__notes__add", a=1, b=2)
        assert not after.ok and "is not running" in after.text
        assert "fatal: the notes index is corrupt" in after.text

    with_hub(scenario)


def test_allowed_and_excluded_tools_and_two_servers_with_the_same_tools():
    async def scenario(run: Run) -> None:
        both = await run.box(stdio("alpha"), stdio("beta"), allowed=["add", "mcp__beta__greeting"])
        assert sorted(both.tools) == ["mcp__alpha__add", "mcp__beta__add", "mcp__beta__greeting"]
        fewer = await run.box(stdio("alpha"), excluded=["mcp__alpha__die", "hang"])
        assert "mcp__alpha__die" not in fewer.tools and "mcp__alpha__hang" not in fewer.tools
        assert "mcp__alpha__add" in fewer.tools
        assert len(run.hub.servers) == 2, "alpha started once and was shared"

    with_hub(scenario)


def test_close_leaves_no_server_process_behind():
    async def scenario() -> list[int]:
        run = Run()
        box = await run.box(stdio("alpha"), stdio("beta"))
        pids = [int((await call(box, f"mcp__{name}__process_id")).text) for name in ("alpha", "beta")]
        await run.hub.close()
        return pids

    pids = asyncio.run(scenario())
    assert len(set(pids)) == 2
    assert all(process_gone(pid) for pid in pids)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port), "--name", "remote"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        process.kill()
        raise AssertionError("the MCP HTTP server never listened")
    yield f"http://127.0.0.1:{port}/mcp"
    process.kill()
    process.wait(10)


def test_streamable_http_server(http_server: str):
    remote = McpServerConfig(name="remote", type="streamable-http", url=http_server, headers={"X-Team": "a"})

    async def scenario(run: Run) -> None:
        box = await run.box(remote)
        assert (await call(box, "mcp__remote__add", a=20, b=22)).text == "42"

    with_hub(scenario)

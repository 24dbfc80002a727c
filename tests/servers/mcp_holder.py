"""A process that holds a started MCP server, as the runner does, until it is killed: ``python
mcp_holder.py SERVER_SCRIPT PID_FILE`` starts the server (tests/servers/mcp_fault_server.py) through
``McpHub``, asks it for its process id, tells it to outlive its stdin (so only the kernel can end it
when this process dies), writes the id to PID_FILE and waits forever."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from massgen_cli.config.extra_tools import McpServerConfig
from massgen_cli.events import ToolCall
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.toolbox import Toolbox


async def hold(server_script: str, pid_file: Path) -> None:
    hub = McpHub(lambda event: None)
    config = McpServerConfig(name="held", command=sys.executable, args=[server_script])
    tools = await hub.tools([config], Path.cwd())
    box = Toolbox({tool.name: tool for tool in tools}, call_timeout_s=60)
    result = await box.run(ToolCall("c", "mcp__held__process_id", {}))
    assert (await box.run(ToolCall("c", "mcp__held__linger", {}))).text == "lingering"
    pid_file.write_text(result.text)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(hold(sys.argv[1], Path(sys.argv[2])))

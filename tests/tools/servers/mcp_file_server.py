"""An MCP stdio server (the SDK's MCPServer) whose tools write and read files where they are told: what
the sandbox must confine."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("files")


@server.tool()
def write_text(path: str, text: str) -> str:
    """Write ``text`` to ``path``."""
    Path(path).write_text(text)
    return f"wrote {Path(path).resolve()}"


@server.tool()
def read_text(path: str) -> str:
    """The text of ``path``."""
    return Path(path).read_text()


if __name__ == "__main__":
    server.run()

"""An MCP server for the tests, written with the SDK's server side. Run over stdio by default, or as a
streamable HTTP server on 127.0.0.1 with ``--http PORT``. ``--name`` sets the server's name."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import INVALID_PARAMS

parser = argparse.ArgumentParser()
parser.add_argument("--http", type=int, default=None)
parser.add_argument("--name", default="notes")
options = parser.parse_args()
server = MCPServer(options.name)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def greeting() -> str:
    """The value of the GREETING environment variable."""
    return os.environ.get("GREETING", "(unset)")


@server.tool()
def process_id() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with an exception the SDK treats as a crash: it keeps the message to itself."""
    raise ValueError(reason)


@server.tool()
def count_defs(path: str) -> int:
    """How many lines of a Python file define a function. A missing file is reported as a tool should
    report a failure, by the SDK's ToolError, whose text the client receives."""
    file = Path(path)
    if not file.is_file():
        raise ToolError(f"no such file: {path}")
    return sum(line.lstrip().startswith(("def ", "async def ")) for line in file.read_text().splitlines())


@server.tool()
def lookup(key: str) -> str:
    """Always fails with a protocol (JSON-RPC) error, which the client session raises."""
    raise MCPError(INVALID_PARAMS, f"unknown key: {key}")


@server.tool()
def hang() -> str:
    """Never answers: it blocks until the server is stopped."""
    threading.Event().wait()
    return "unreachable"


@server.tool()
def die() -> str:
    """Ends the server at once, as a crash would."""
    sys.stderr.write("fatal: the notes index is corrupt\n")
    sys.stderr.flush()
    os._exit(7)


if __name__ == "__main__":
    if os.environ.get("PID_FILE"):  # tests find this process by it
        with open(os.environ["PID_FILE"], "w") as pid_file:
            pid_file.write(str(os.getpid()))
    if options.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run()

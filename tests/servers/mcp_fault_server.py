"""An MCP server written with the SDK's server side that misbehaves on request, for the fault tests.

``--http PORT`` serves streamable HTTP on 127.0.0.1 instead of stdio (its answers as server-sent
events, or as plain JSON with ``--json``). ``--junk N`` writes N lines that are not JSON-RPC on stdout
before serving (as a server that prints a banner or logs to stdout does). ``--stall`` never serves at
all: it starts a child, ignores SIGTERM and waits forever (a server stuck in its start). ``PID_FILE`` in
the environment names a file where the server writes its process id (and, with ``--stall``, its
child's, one per line)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


def write_pids(*pids: int) -> None:
    if os.environ.get("PID_FILE"):
        with open(os.environ["PID_FILE"], "w") as pid_file:
            pid_file.write("".join(f"{pid}\n" for pid in pids))


def stall() -> None:
    """Never answer: the SDK is not even imported (so the start is stuck however long it is given)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import threading; threading.Event().wait()"])
    write_pids(os.getpid(), child.pid)
    threading.Event().wait()


if "--stall" in sys.argv:
    stall()

from mcp.server.mcpserver import MCPServer  # noqa: E402 (after the stall, which must not wait for it)

WIRE = os.dup(1)
"""The protocol's stdout, kept before the SDK diverts descriptor 1 to stderr (as it does for print)."""

server = MCPServer("faults")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def process_id() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def big(size: int) -> str:
    """A text of ``size`` characters that starts with BEGIN."""
    return "BEGIN" + "x" * (size - len("BEGIN"))


@server.tool()
def linger() -> str:
    """From now on the server does not exit when its stdin closes: a thread of it waits forever."""
    threading.Thread(target=threading.Event().wait, daemon=False).start()
    return "lingering"


@server.tool()
def chatter(lines: int) -> str:
    """Writes ``lines`` lines that are not JSON-RPC on the protocol's stdout, then answers."""
    os.write(WIRE, b"progress: still working on it\n" * lines)
    return "done"


if __name__ == "__main__":
    if "--junk" in sys.argv:
        count = int(sys.argv[sys.argv.index("--junk") + 1])
        os.write(WIRE, b"".join(f"Starting faults server, step {step}\n".encode() for step in range(count)))
    write_pids(os.getpid())
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port, json_response="--json" in sys.argv)
    else:
        server.run()

"""A small MCP server over a folder of notes, for the mcp_notes example: list, read and search the
text files of one folder (read-only; paths never leave the folder). Written with the mcp SDK.

    python -m massgen_cli.configs.tools.notes_server --folder notes
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

MAX_CHARS = 20_000
MAX_MATCHES = 50


def build(folder: Path) -> MCPServer:
    """The server, answering over ``folder``."""
    server = MCPServer("notes")
    root = folder.resolve()

    def note(name: str) -> Path:
        path = (root / name).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise ToolError(f"no note named {name!r} (list_notes shows them)")
        return path

    @server.tool()
    def list_notes() -> list[str]:
        """The notes in the folder (relative paths), sorted."""
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    @server.tool()
    def read_note(name: str) -> str:
        """The text of one note.

        Args:
            name: The note's path as list_notes shows it.
        """
        return note(name).read_text(encoding="utf-8", errors="replace")[:MAX_CHARS]

    @server.tool()
    def search_notes(pattern: str) -> list[str]:
        """Lines of every note that match a regular expression, as 'note:line: text'.

        Args:
            pattern: A Python regular expression, matched case-insensitively.
        """
        regex = re.compile(pattern, re.IGNORECASE)
        found = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            found += [
                f"{path.relative_to(root)}:{n}: {line}"
                for n, line in enumerate(lines, 1)
                if regex.search(line)
            ]
        return found[:MAX_MATCHES]

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folder", default="notes", help="The notes folder (default: ./notes).")
    folder = Path(parser.parse_args().folder)
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    build(folder).run()


if __name__ == "__main__":
    main()

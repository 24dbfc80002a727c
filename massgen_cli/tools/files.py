"""The built-in file tools over an agent's roots: read_file, list_directory, search_files, write_file,
edit_file. Every path goes through ``Roots.confine`` (a relative path is in the workspace); every result
and error names the absolute paths it touched; every result is bounded."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.tools.base import RESULT_CHARS, Tool, ToolError, argument, bounded, schema
from massgen_cli.tools.file_access import (
    NotText,
    open_regular,
    opened_folder,
    read_lines,
    refuse_binary,
    whole_text,
    write_regular,
)
from massgen_cli.tools.paths import Roots

if TYPE_CHECKING:
    import regex

READ_LINES = 400
LIST_ENTRIES = 500
SEARCH_MATCHES = 100
SEARCH_FILE_BYTES = 2_000_000
SEARCH_SECONDS = 10.0
"""The deadline of one search, whatever the pattern and the folder."""
EDIT_FILE_BYTES = 8_000_000
MATCH_LINE_CHARS = 300
SKIPPED_FOLDERS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache"})


def file_tools(roots: Roots) -> list[Tool]:
    """The file tools for ``roots``; the writing ones only when some root is writable. Each description
    says what a relative path means (the workspace)."""
    path = _path_parameter(roots)
    tools = [
        _tool(
            "read_file",
            "Read a text file: numbered lines from line `offset` (1-based), at most `limit` lines.",
            {
                "path": path,
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            ["path"],
            lambda a: read_file(roots, a),
        ),
        _tool(
            "list_directory",
            "List a folder: sub-folders end with '/', files show their size in bytes.",
            {"path": path},
            ["path"],
            lambda a: list_directory(roots, a),
        ),
        _tool(
            "search_files",
            "Search file contents with a regular expression (Python syntax) under `path` (default: `.`); "
            "returns `path:line: text` for each match.",
            {"pattern": {"type": "string"}, "path": path},
            ["pattern"],
            lambda a: search_files(roots, a),
        ),
    ]
    if any(root.writable or root.final_only for root in roots.roots):
        tools += [
            _tool(
                "write_file",
                "Create or replace a text file (folders are created as needed).",
                {"path": path, "content": {"type": "string"}},
                ["path", "content"],
                lambda a: write_file(roots, a),
            ),
            _tool(
                "edit_file",
                "Replace the one occurrence of `old` in a text file with `new`.",
                {"path": path, "old": {"type": "string"}, "new": {"type": "string"}},
                ["path", "old", "new"],
                lambda a: edit_file(roots, a),
            ),
        ]
    return [_with_path_rule(tool, roots) for tool in tools]


def _path_rule(roots: Roots) -> str:
    """The sentence every file tool's description ends with: what a relative path means."""
    return f"{roots.relative_rule()} The result names the absolute path used."


def _path_parameter(roots: Roots) -> dict[str, str]:
    where = "your workspace" if roots.has_workspace else "the current folder"
    return {
        "type": "string",
        "description": f"An absolute path, or a path relative to {where} ({roots.base}).",
    }


def _with_path_rule(tool: Tool, roots: Roots) -> Tool:
    """``tool`` with its description ending on what a relative path means."""
    return replace(tool, spec=replace(tool.spec, description=f"{tool.spec.description} {_path_rule(roots)}"))


def _tool(
    name: str, description: str, properties: dict[str, Any], required: list[str], body: Callable[[Any], str]
) -> Tool:
    async def run(arguments: dict[str, Any]) -> str:
        return await asyncio.to_thread(body, arguments)

    return Tool(ToolSpec(name, description, schema(properties, required)), run)


def read_file(roots: Roots, arguments: dict[str, Any]) -> str:
    """Numbered lines of a regular text file; only the lines shown are held (a huge file or a huge
    line costs what is returned, not its size)."""
    path = roots.confine(argument(arguments, "path", str))
    offset = argument(arguments, "offset", int, 1)
    limit = min(argument(arguments, "limit", int, READ_LINES), READ_LINES)
    with open_regular(path) as file:
        refuse_binary(file, path)
        lines = read_lines(file, offset, limit, RESULT_CHARS)
        size = os.fstat(file.fileno()).st_size
    body = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines.shown, start=offset))
    header = f"{path}: lines {offset}-{lines.last}"
    header += f" of {lines.total}" if lines.total is not None else f" of a {size:,}-byte file"
    if not lines.ended:
        header += f" (more: offset={lines.last + 1})"
    return bounded(f"{header}\n{body}", RESULT_CHARS, "read a smaller range with offset and limit")


def list_directory(roots: Roots, arguments: dict[str, Any]) -> str:
    path = roots.confine(argument(arguments, "path", str, "."))
    with opened_folder(path) as folder:
        shown = [entry for entry in os.scandir(folder) if not roots.is_private(path / entry.name)]
        entries = sorted(shown, key=lambda entry: (not entry.is_dir(follow_symlinks=False), entry.name))
        lines = [_entry_line(entry) for entry in entries[:LIST_ENTRIES]]
    if len(entries) > LIST_ENTRIES:
        lines.append(f"[cut: {len(entries) - LIST_ENTRIES} more entries not shown]")
    return bounded(f"{path}: {len(entries)} entries\n" + "\n".join(lines))


def _entry_line(entry: os.DirEntry[str]) -> str:
    """A folder with ``/``, a link as a link (never what it points to: its target may be outside the
    roots), a file with its size."""
    if entry.is_symlink():
        return f"{entry.name}  (a link)"
    if entry.is_dir(follow_symlinks=False):
        return entry.name + "/"
    try:
        return f"{entry.name}  {entry.stat(follow_symlinks=False).st_size}"
    except OSError:
        return f"{entry.name}  ?"


def search_files(roots: Roots, arguments: dict[str, Any]) -> str:
    """Lines matching a regular expression under a folder. The pattern is the model's: it runs on the
    ``regex`` engine with a deadline for the whole search (a catastrophically backtracking pattern ends
    the search with what was found, never the run); special files are skipped and said."""
    import regex  # imported by the first search, not by every run

    try:
        pattern = regex.compile(argument(arguments, "pattern", str))
    except regex.error as error:
        raise ToolError(f"invalid regular expression: {error}") from None
    top = roots.confine(argument(arguments, "path", str, "."))
    search = Search(pattern, time.monotonic() + SEARCH_SECONDS)
    for file in _files_under(roots, top, search):
        search.scan(file)
        if search.finished:
            break
    return search.report(top)


@dataclass
class Search:
    """One search's matches, what it skipped, and its deadline."""

    pattern: regex.Pattern[str]
    deadline: float
    matches: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    timed_out: bool = False

    @property
    def finished(self) -> bool:
        return self.timed_out or len(self.matches) > SEARCH_MATCHES

    def scan(self, file: Path) -> None:
        try:
            text = whole_text(file, SEARCH_FILE_BYTES)
        except NotText as error:
            self.skipped[error.kind] += 1
            return
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                left = max(0.0, self.deadline - time.monotonic())
                found = self.pattern.search(line, concurrent=True, timeout=left)  # the GIL is let go
            except TimeoutError:
                self.timed_out = True
                return
            if found:
                self.matches.append(f"{file}:{number}: {line[:MATCH_LINE_CHARS]}")
                if self.finished:
                    return

    def report(self, top: Path) -> str:
        lines = self.matches[:SEARCH_MATCHES] or [f"no match for {self.pattern.pattern!r} under {top}"]
        if len(self.matches) > SEARCH_MATCHES:
            lines.append(f"[cut: stopped after {SEARCH_MATCHES} matches; narrow the pattern or path]")
        if self.timed_out:
            lines.append(
                f"[stopped after {SEARCH_SECONDS:g}s: the pattern or the folder takes too long to search; "
                "simplify the pattern (nested repeats such as (a+)+ backtrack) or narrow the path]"
            )
        if self.skipped:
            what = ", ".join(f"{kind}: {count}" for kind, count in sorted(self.skipped.items()))
            lines.append(f"[files not searched ({what})]")
        return bounded("\n".join(lines))


def _files_under(roots: Roots, top: Path, search: Search) -> Iterator[Path]:
    """Files under ``top`` (or ``top`` itself), sorted, never leaving the roots through a symlink; the
    walk stops at the search's deadline."""
    if not top.is_dir():
        yield top
        return
    for folder, subfolders, files in os.walk(top):
        if time.monotonic() > search.deadline:
            search.timed_out = True
            return
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name not in SKIPPED_FOLDERS and not roots.is_private(Path(folder, name).resolve())
        )
        for name in sorted(files):
            try:
                yield roots.confine(str(Path(folder, name)))
            except ToolError:
                continue


def write_file(roots: Roots, arguments: dict[str, Any]) -> str:
    path = roots.confine(argument(arguments, "path", str), write=True)
    content = argument(arguments, "content", str)
    created = write_regular(path, content, make_folders=True)
    what = "a new file" if created else "the old content replaced"
    return f"wrote {len(content)} characters to {path} ({what})"


def edit_file(roots: Roots, arguments: dict[str, Any]) -> str:
    path = roots.confine(argument(arguments, "path", str), write=True)
    old, new = argument(arguments, "old", str), argument(arguments, "new", str)
    text = whole_text(path, EDIT_FILE_BYTES)
    count = text.count(old) if old else 0
    if count != 1:
        raise ToolError(f"`old` occurs {count} times in {path}; it must occur exactly once")
    write_regular(path, text.replace(old, new, 1))
    return f"edited {path}: replaced {len(old)} characters with {len(new)}"

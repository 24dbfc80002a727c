"""Faults a model or a tool can cause, injected for real: a backtracking pattern, a FIFO, a hanging
custom tool, a huge file, a command that prints without end. Each run ends within its bound, exits 0
with its answer, and the tool's result says what happened."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import events_text, write_config

RUN_BOUND_S = 300
"""A hang detector, not a benchmark: each of these runs takes a few seconds when it works, and each test
judges the state it ends in (its answer, the tool's note, the agent's failure); the bound only ends a
run that hangs, and is wide enough for a busy machine."""

HANGING_TOOL = '''
import threading


def hang_forever(question: str) -> str:
    """Never returns.

    Args:
        question: anything
    """
    threading.Event().wait()
    return "never"
'''


def run_massgen(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` in a process of its own, ended as a hang after ``RUN_BOUND_S``."""
    return subprocess.run(
        [sys.executable, "-m", "massgen_cli", *args],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND_S,
        env=dict(os.environ),
        cwd=cwd,
        check=False,
    )


def tool_results() -> dict[str, str]:
    """Each finished tool call's summary in the run's events, by tool name (the last one wins)."""
    found = {}
    for line in events_text().splitlines():
        event = json.loads(line)
        if event.get("type") == "ToolFinished":
            found[event["name"]] = event["summary"]
    return found


def one_agent(workspace: Path, calls: str, extra: str = "") -> str:
    return f"""
        agent:
          id: probe
          backend:
            type: scripted
            cwd: {workspace}
            {extra}
            responses:
              - calls: {calls}
              - "Done."
        orchestrator: {{tool_call_timeout_seconds: 2}}
        """


def test_a_backtracking_pattern_ends_with_a_note_and_the_run_answers(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "long.txt").write_text("a" * 50_000 + "c\n")
    calls = '[{tool: search_files, args: {pattern: "^(a|aa)+$"}}]'
    write_config(tmp_path, one_agent(workspace, calls))
    result = run_massgen("--config", "config.yaml", "Search.", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\n"
    # the 2 s tool timeout returned control; the search stops itself at its own deadline
    assert "took longer than 2s" in tool_results()["search_files"]


def test_a_fifo_is_refused_by_read_and_skipped_by_search(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "pipe")
    (workspace / "notes.txt").write_text("the needle is here\n")
    calls = "[{tool: read_file, args: {path: pipe}}, {tool: search_files, args: {pattern: needle}}]"
    write_config(tmp_path, one_agent(workspace, calls))
    result = run_massgen("--config", "config.yaml", "Read.", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "Done.\n", result.stderr
    results = tool_results()
    assert "is a named pipe (FIFO); the file tools use regular files only" in results["read_file"]
    assert "notes.txt:1: the needle is here" in results["search_files"]
    assert "files not searched (special file: 1)" in results["search_files"]


def test_a_hanging_custom_tool_times_out_and_the_process_still_exits(tmp_path: Path):
    tools = tmp_path / "hang.py"
    tools.write_text(HANGING_TOOL)
    calls = '[{tool: custom_tool__hang_forever, args: {question: "x"}}]'
    extra = f"custom_tools: [{{name: hang_forever, function: hang_forever, path: {tools}}}]"
    write_config(tmp_path, one_agent(tmp_path / "ws", calls, extra))
    result = run_massgen("--config", "config.yaml", "Hang.", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "Done.\n", result.stderr
    # the process ended (within the hang bound) although the tool's thread never returns
    assert "took longer than 2s and was stopped" in tool_results()["custom_tool__hang_forever"]


def test_a_huge_file_is_read_in_part_with_bounded_memory(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with (workspace / "big.log").open("wb") as big:  # 300 MB: one line of 200 MB, then short lines
        big.write(b"x" * (200 << 20) + b"\n")
        line = b"row of the log\n"
        big.write(line * ((100 << 20) // len(line)))
    from massgen_cli.tools.files import read_file
    from massgen_cli.tools.paths import Root, Roots

    roots = Roots(workspace.resolve(), (Root.of(workspace, writable=False),))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = read_file(roots, {"path": "big.log", "limit": 3})
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    lines = text.splitlines()
    size = (workspace / "big.log").stat().st_size
    assert lines[0].endswith(f"big.log: lines 1-3 of a {size:,}-byte file (more: offset=4)")
    assert "[line cut: " in lines[1] and lines[2].endswith("row of the log")
    assert grown_mb < 20, f"reading 3 lines of a 300 MB file grew the process by {grown_mb:.0f} MB"


def test_endless_command_output_is_held_as_head_and_tail(tmp_path: Path):
    from massgen_cli.tools.commands import Confinement, run_command
    from massgen_cli.tools.paths import Root, Roots

    roots = Roots(tmp_path.resolve(), (Root.of(tmp_path, writable=True),))
    command = "head -c 300000000 /dev/zero | tr '\\0' x; echo; echo THE-END"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = asyncio.run(run_command(Confinement(roots, None), command, 60)).text
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert text.startswith("exit code: 0\nxxxx") and text.rstrip().endswith("THE-END")
    assert "[cut: 299,988,00" in text and "bytes of output not shown]" in text and len(text) < 13_000
    assert grown_mb < 20, f"300 MB of output grew the process by {grown_mb:.0f} MB"


def test_any_tools_huge_result_is_bounded_for_the_model():
    from massgen_cli.events import ToolCall
    from massgen_cli.tools.base import RESULT_CHARS
    from massgen_cli.tools.custom import custom_tool
    from massgen_cli.tools.toolbox import LONG_RESULT_HINT, Toolbox

    def dump() -> str:
        """Returns five million characters."""
        return "y" * 5_000_000

    tool = custom_tool("dump", dump, None, {}, None)
    result = asyncio.run(Toolbox({tool.name: tool}).run(ToolCall("c1", tool.name, {})))
    assert result.ok and len(result.text) <= RESULT_CHARS
    assert result.text.endswith(f"characters not shown; {LONG_RESULT_HINT}]")

"""The file tools over a notes folder: the shipped @examples/local_files, whose scripted agent calls them
and answers with what it read; and the embedded model offered the same read-only tools through its JSON
schema, for real (a 135M model rarely calls them; the tool loop behind a JSON schema is proven with
scripted models in tests/coordination/test_tool_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import first_attempt_folder, run_cli, write_config

MEETING = "The team meeting moved to Thursday at 10:00."


def notes(folder: Path) -> None:
    (folder / "notes").mkdir()
    (folder / "notes" / "meeting.txt").write_text(MEETING + "\n")


def test_the_shipped_example_reads_the_notes_with_the_file_tools(tmp_path: Path):
    notes(tmp_path)
    result = run_cli("--config", "@examples/local_files", "Read notes/meeting.txt. When is the team meeting?")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == f"From notes/meeting.txt: {MEETING}\n", "the answer carries what the tool read"
    attempt = first_attempt_folder()
    events = [json.loads(line) for line in (attempt / "events.jsonl").read_text().splitlines()]
    finished = [(e["name"], e["ok"]) for e in events if e["type"] == "ToolFinished"]
    assert sorted(finished) == [("list_directory", True), ("read_file", True)], "both ran (in either order)"
    first = json.loads((attempt / "requests" / "reader_001.json").read_text())
    assert first["tools"] == ["read_file", "list_directory", "search_files"], "read-only: no writing tool"
    summary = json.loads((attempt / "summary.json").read_text())
    assert summary["tool_calls"]["reader"]["calls"] == 2


EMBEDDED_WITH_FILE_TOOLS = """
agent:
  id: reader
  system_message: >-
    You answer questions about the user's notes. First read the file the question names, for example
    {"action": "call_tool", "tool": "read_file", "arguments": {"path": "notes/meeting.txt"}}, then answer
    with what the file says.
  backend:
    type: local
    model: smollm2-135m
    max_tokens: 200
    temperature: 0.0
    context_paths:
      - path: notes
        permission: read
orchestrator:
  max_tool_calls_per_step: 3
"""


@pytest.mark.slow
def test_embedded_model_runs_with_file_tools_over_a_notes_folder(tmp_path: Path):
    notes(tmp_path)
    config = write_config(tmp_path, EMBEDDED_WITH_FILE_TOOLS)
    result = run_cli("--config", str(config), "Read notes/meeting.txt. When is it?", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()
    attempt = first_attempt_folder()
    first = json.loads((attempt / "requests" / "reader_001.json").read_text())
    offered = [option["properties"]["tool"]["enum"][0] for option in first["response_schema"]["anyOf"][1:]]
    assert offered == ["read_file", "list_directory", "search_files"]  # read-only: no writing tools
    assert "notes (read)" in first["messages"][0]["content"]
    summary = json.loads((attempt / "summary.json").read_text())
    assert summary["final_answer"] == result.stdout.strip() and "reader" in summary["tool_calls"]

"""The shipped @examples/local_files with the embedded model, for real: it is offered the read-only file
tools through its JSON schema over ./notes and answers. (A 135M model rarely calls them; the tool
loop behind a JSON schema is proven with scripted models in tests/coordination/test_tool_loop.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import first_attempt_folder, run_cli


@pytest.mark.slow
def test_embedded_model_runs_with_file_tools_over_a_notes_folder(tmp_path: Path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "meeting.txt").write_text("The team meeting moved to Thursday at 10:00.\n")
    result = run_cli("--config", "@examples/local_files", "Read notes/meeting.txt. When is it?", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()
    attempt = first_attempt_folder()
    first = json.loads((attempt / "requests" / "reader_001.json").read_text())
    offered = [option["properties"]["tool"]["enum"][0] for option in first["response_schema"]["anyOf"][1:]]
    assert offered == ["read_file", "list_directory", "search_files"]  # read-only: no writing tools
    assert "notes (read)" in first["messages"][0]["content"]
    summary = json.loads((attempt / "summary.json").read_text())
    assert summary["final_answer"] == result.stdout.strip() and "reader" in summary["tool_calls"]

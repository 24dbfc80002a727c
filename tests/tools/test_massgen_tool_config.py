"""A MassGen-style config with cwd, context_paths, custom_tools and command-line execution runs through
the CLI with working tools and no "not implemented" warning; peers see the tool activity, attributed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import first_attempt_folder, run_cli, write_config

FUNCTIONS = str(Path(__file__).with_name("custom_functions.py"))

CONFIG = f"""
agents:
  - id: "builder"
    backend:
      type: "scripted"
      cwd: "workspace1"
      enable_mcp_command_line: true
      command_line_execution_mode: "local"
      command_line_blocked_commands: ["rm\\\\s"]
      custom_tools:
        - name: ["word_count"]
          category: "text"
          path: "{FUNCTIONS}"
          function: ["word_count"]
      responses:
        - calls:
            - {{tool: execute_command, args: {{command: "echo built > build.log && cat build.log"}}}}
            - {{tool: custom_tool__word_count, args: {{text: "three little words"}}}}
            - {{tool: read_file, args: {{path: "../docs/guide.md"}}}}
            - {{tool: execute_command, args: {{command: "rm -r ../docs"}}}}
        - {{tool: new_answer, args: {{content: "Built; the guide says to run make."}}}}
        - {{tool: vote, args: {{agent_id: agent1, reason: "done"}}}}
  - id: "reviewer"
    backend:
      type: "scripted"
      cwd: "workspace2"
      responses:
        - {{tool: vote, args: {{agent_id: agent1, reason: "it built"}}, delay: 0.5}}
orchestrator:
  context_paths:
    - path: "docs"
      permission: "read"
  final_presentation: reuse
  shared_memory:
    conversation: true
ui:
  display_type: "simple"
  logging_enabled: true
"""


def test_a_massgen_config_with_tools_runs_them(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("To build, run make.\n")
    write_config(tmp_path, CONFIG)
    result = run_cli("--config", "config.yaml", "Build it and tell me how.")
    assert result.returncode == 0, result.stderr
    assert "not implemented" not in result.stderr
    assert result.stdout == "Built; the guide says to run make.\n"
    assert (tmp_path / "workspace1" / "build.log").read_text() == "built\n"
    assert (tmp_path / "workspace2").is_dir() and (tmp_path / "docs" / "guide.md").exists()
    attempt = first_attempt_folder()
    assert json.loads((attempt / "summary.json").read_text())["tool_calls"] == {
        "builder": {"calls": 4, "failed": 1},
        "reviewer": {"calls": 0, "failed": 0},
    }
    results = json.loads((attempt / "requests" / "builder_002.json").read_text())["messages"][-4:]
    firsts = [m["content"].splitlines()[0] for m in results]
    assert firsts[:2] == ["exit code: 0", "3"]
    assert firsts[2].endswith("docs/guide.md: lines 1-1 of 1")
    assert firsts[3] == "Error: command refused: `rm -r ../docs` matches the blocked pattern `rm\\s`"
    assert "To build, run make." in results[2]["content"]
    shown = [
        json.loads(path.read_text())["messages"]
        for path in sorted((attempt / "requests").glob("reviewer_*.json"))
    ]
    shared = [
        m["content"] for messages in shown for m in messages if "SHARED CONVERSATION" in str(m["content"])
    ]
    assert any(
        "Used tools: execute_command ×2, custom_tool__word_count ×1, read_file ×1" in s for s in shared
    )
    assert any("builder" in s for s in shared)

"""A MassGen config with mcp_servers (the mapping form, ${VAR} in env) through the CLI: an agent calls the
server's tools, two agents that name the same server share one process, and none is left running
after the CLI exits."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import events_text, first_attempt_folder, process_gone, run_cli, wait_until, write_config

SERVER = str(Path(__file__).with_name("servers") / "mcp_test_server.py")

CONFIG = f"""
agents:
  - id: a
    backend:
      type: scripted
      mcp_servers:
        notes:
          type: stdio
          command: {sys.executable}
          args: ["{SERVER}"]
          env: {{GREETING: "${{MCP_GREETING}}"}}
      exclude_tools: [die]
      responses:
        - calls:
            - {{tool: mcp__notes__greeting}}
            - {{tool: mcp__notes__process_id}}
            - {{tool: mcp__notes__add, args: {{a: 40, b: 2}}}}
        - {{tool: new_answer, args: {{content: "The answer is 42."}}}}
        - {{tool: vote, args: {{agent_id: agent1, reason: "computed"}}}}
  - id: b
    backend:
      type: scripted
      mcp_servers:
        - name: notes
          type: stdio
          command: {sys.executable}
          args: ["{SERVER}"]
          env: {{GREETING: "${{MCP_GREETING}}"}}
      responses:
        - {{tool: vote, args: {{agent_id: agent1, reason: "agreed"}}}}
orchestrator:
  final_presentation: reuse
ui:
  display_type: simple
"""


def test_a_config_with_mcp_servers_calls_them_and_stops_them(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MCP_GREETING", "hi from the environment")
    write_config(tmp_path, CONFIG)
    result = run_cli("--config", "config.yaml", "What is 40 + 2?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"
    assert "not implemented" not in result.stderr
    assert result.stderr.count("MCP server 'notes' started") == 1, "one server for both agents"
    attempt = first_attempt_folder()
    sent = json.loads((attempt / "requests" / "a_002.json").read_text())["messages"][-3:]
    assert [m["content"] for m in (sent[0], sent[2])] == ["hi from the environment", "42"]
    first = json.loads((attempt / "requests" / "a_001.json").read_text())
    assert "mcp__notes__add" in first["tools"] and "mcp__notes__die" not in first["tools"]
    b_first = json.loads((attempt / "requests" / "b_001.json").read_text())
    assert "mcp__notes__add" in b_first["tools"] and "mcp__notes__die" in b_first["tools"]
    assert process_gone(int(sent[1]["content"]))


@pytest.mark.parametrize(("signal_number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_call_stops_the_server_too(tmp_path: Path, signal_number: int, code: int):
    pid_file = tmp_path / "server.pid"
    write_config(
        tmp_path,
        f"""
        agent:
          backend:
            type: scripted
            mcp_servers:
              - name: notes
                command: {sys.executable}
                args: ["{SERVER}"]
                env: {{PID_FILE: "{pid_file}"}}
            responses:
              - {{tool: mcp__notes__hang}}
              - "done"
        """,
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "Wait."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: pid_file.exists() and pid_file.read_text().strip().isdigit())
        server = int(pid_file.read_text())
        wait_until(lambda: "ToolStarted" in events_text())
        cli.send_signal(signal_number)
        assert cli.wait(60) == code
    finally:
        if cli.poll() is None:
            cli.kill()
    assert process_gone(server)


def test_the_shipped_notes_server_example_runs_offline(tmp_path: Path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "launch.md").write_text("The launch review is on March 3.\n")
    (tmp_path / "notes" / "misc.md").write_text("Lunch is at noon.\n")
    result = run_cli("--config", "@examples/mcp_notes", "When is the launch review?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "From the notes: launch.md:1: The launch review is on March 3.\n"
    assert "🔧 mcp__notes__list_notes ✓ launch.md" in result.stderr

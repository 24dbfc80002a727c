"""A MassGen config with mcp_servers (the mapping form, ${VAR} in env) through the CLI: an agent calls the
server's tools, two agents that name the same server share one process, and none is left running
after the CLI exits."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.conftest import process_gone, run_cli, write_config

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
    attempt = next((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir()) / "turn_1" / "attempt_1"
    sent = json.loads((attempt / "requests" / "a_002.json").read_text())["messages"][-3:]
    assert [m["content"] for m in (sent[0], sent[2])] == ["hi from the environment", "42"]
    first = json.loads((attempt / "requests" / "a_001.json").read_text())
    assert "mcp__notes__add" in first["tools"] and "mcp__notes__die" not in first["tools"]
    b_first = json.loads((attempt / "requests" / "b_001.json").read_text())
    assert "mcp__notes__add" in b_first["tools"] and "mcp__notes__die" in b_first["tools"]
    assert process_gone(int(sent[1]["content"]))

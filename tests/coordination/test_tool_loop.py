"""The tool loop inside steps, with scripted agents and through the OpenAI and Anthropic wire formats:
several calls per reply run together, the per-step cap withdraws the tools, a restart cancels running
tools, and calls and results are kept with full structure in threads, logs, events and summary.json."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.coordination import prompts
from tests.conftest import processes_with, spawn_waiting_child, wait_until
from tests.servers.fake_providers import FakeProviderServer, anthropic_stream, openai_stream

FUNCTIONS = str(Path(__file__).resolve().parents[1] / "tools" / "custom_functions.py")


def attempt_folder(run, turn: int = 1) -> Path:  # type: ignore[no-untyped-def]
    return Path(run.app.run_log.directory) / f"turn_{turn}" / "attempt_1"


def events_of(run, kind: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    lines = (attempt_folder(run) / "events.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["type"] == kind]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "facts.txt").write_text("The service listens on port 8123.\n")
    (folder / "notes.md").write_text("nothing else\n")
    return folder


def test_a_single_agent_reads_files_then_answers(in_process, workspace: Path):
    run = in_process(
        f"""
        agent:
          id: reader
          backend:
            type: scripted
            cwd: {workspace}
            responses:
              - calls:
                  - {{tool: read_file, args: {{path: facts.txt}}}}
                  - {{tool: list_directory, args: {{path: .}}}}
              - "It listens on port 8123."
        """
    )
    result = run.app.ask("Which port?")
    assert result.final_answer == "It listens on port 8123."
    second = run.requests("reader")[1].messages
    assistant, read, listing = second[-3:]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["read_file", "list_directory"]
    assert read["role"] == "tool" and read["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "port 8123" in read["content"] and "notes.md" in listing["content"]
    thread = run.app.run.threads.get_history("reader")
    assert [m["role"] for m in thread] == ["user", "assistant", "tool", "tool", "assistant"]
    summary = json.loads((attempt_folder(run) / "summary.json").read_text())
    assert summary["tool_calls"] == {"reader": {"calls": 2, "failed": 0}}
    started, finished = events_of(run, "ToolStarted"), events_of(run, "ToolFinished")
    assert [e["name"] for e in started] == ["read_file", "list_directory"]
    assert all(e["ok"] for e in finished)  # the two calls ran at once: they finish in either order
    assert "facts.txt: lines 1-1 of 1" in next(e["summary"] for e in finished if e["name"] == "read_file")
    logged = json.loads((attempt_folder(run) / "requests" / "reader_002.json").read_text())
    assert logged["messages"][-3]["tool_calls"][0]["function"]["name"] == "read_file"
    assert "🔧 read_file ✓" in run.err.getvalue()


def test_the_cap_withdraws_the_tools_and_asks_for_a_decision(in_process, workspace: Path):
    run = in_process(
        f"""
        orchestrator:
          max_tool_calls_per_step: 2
        agent:
          id: reader
          backend:
            type: scripted
            cwd: {workspace}
            responses:
              - calls:
                  - {{tool: read_file, args: {{path: facts.txt}}}}
                  - {{tool: read_file, args: {{path: notes.md}}}}
                  - {{tool: read_file, args: {{path: facts.txt}}}}
              - "Port 8123."
        """
    )
    result = run.app.ask("Which port?")
    assert result.final_answer == "Port 8123."
    first, second = run.requests("reader")
    assert "read_file" in [tool.name for tool in first.tools] and second.tools == ()
    refused = second.messages[-2]
    assert refused["role"] == "tool" and "tool call limit of this step is reached" in refused["content"]
    assert second.messages[-1] == {"role": "user", "content": prompts.ANSWER_NOW.format(limit=2)}
    summary = json.loads((attempt_folder(run) / "summary.json").read_text())
    assert summary["tool_calls"] == {"reader": {"calls": 2, "failed": 0}}


def test_coordinating_agents_use_tools_and_a_restart_cancels_a_running_command(in_process, tmp_path: Path):
    pid_file = tmp_path / "a_ws" / "child.pid"
    waiting_child, marker = spawn_waiting_child()
    run = in_process(
        f"""
        agents:
          - id: a
            backend:
              type: scripted
              cwd: {tmp_path / "a_ws"}
              enable_mcp_command_line: true
              responses:
                - tool: execute_command
                  args: {{command: {json.dumps(waiting_child)}}}
                - {{tool: vote, args: {{agent_id: agent2, reason: "it is complete"}}}}
          - id: b
            backend:
              type: scripted
              custom_tools:
                - {{name: wait_for_file, function: wait_for_file, path: {FUNCTIONS}}}
              responses:
                - {{tool: custom_tool__wait_for_file, args: {{path: {pid_file}}}}}
                - {{tool: new_answer, args: {{content: "B's answer"}}}}
                - {{tool: vote, args: {{agent_id: agent2, reason: "mine"}}}}
        orchestrator:
          final_presentation: reuse
        """
    )
    result = run.app.ask("Go")
    assert result.winner == "b" and result.final_answer == "B's answer"
    assert pid_file.read_text().strip(), "the child was started"
    wait_until(lambda: not processes_with(marker))
    finished = {(e["agent_id"], e["name"]) for e in events_of(run, "ToolFinished")}
    assert ("b", "custom_tool__wait_for_file") in finished
    assert ("a", "execute_command") not in finished  # cancelled, never finished
    restarted = [
        e for e in events_of(run, "AgentStatus") if e["agent_id"] == "a" and e["status"] == "restarted"
    ]
    assert restarted


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def test_openai_wire_format_tool_round_trip(in_process, workspace: Path, provider: FakeProviderServer):
    provider.script(
        openai_stream("Let me look.", tool_calls=[("call_7", "read_file", '{"path": "facts.txt"}')]),
        openai_stream("Port 8123."),
    )
    run = in_process(
        f"""
        agent:
          id: gpt
          backend:
            type: chatcompletion
            model: fake-model
            base_url: {provider.root_url}/v1
            api_key: sk-test
            cwd: {workspace}
        """
    )
    assert run.app.ask("Which port?").final_answer == "Port 8123."
    first, second = (request.body for request in provider.requests)
    assert "read_file" in [tool["function"]["name"] for tool in first["tools"]]
    assistant, result = second["messages"][-2:]
    assert assistant["content"] == "Let me look."
    assert assistant["tool_calls"][0]["id"] == "call_7"
    assert (
        result["role"] == "tool" and result["tool_call_id"] == "call_7" and "port 8123" in result["content"]
    )


def test_anthropic_wire_format_tool_round_trip(in_process, workspace: Path, provider: FakeProviderServer):
    provider.script(
        anthropic_stream(tool_uses=[("toolu_1", "search_files", '{"pattern": "port \\\\d+"}')]),
        anthropic_stream("Port 8123."),
    )
    run = in_process(
        f"""
        agent:
          id: claude
          backend:
            type: claude
            model: claude-fake
            base_url: {provider.root_url}
            api_key: sk-test
            cwd: {workspace}
        """
    )
    assert run.app.ask("Which port?").final_answer == "Port 8123."
    second = provider.requests[1].body
    use, result = second["messages"][-2:]
    assert use["role"] == "assistant" and use["content"][0]["type"] == "tool_use"
    assert use["content"][0]["input"] == {"pattern": "port \\d+"}
    block = result["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert "facts.txt:1: The service listens on port 8123." in block["content"]


def test_a_model_without_tool_calls_uses_tools_through_its_json_schema(in_process, workspace: Path):
    run = in_process(
        f"""
        agent:
          id: small
          backend:
            type: scripted
            scripted_tool_calls: false
            cwd: {workspace}
            responses:
              - {{tool: read_file, args: {{path: facts.txt}}}}
              - {{tool: answer, args: {{content: "Port 8123."}}}}
        """
    )
    result = run.app.ask("Which port?")
    assert result.final_answer == "Port 8123."
    first, second = run.requests("small")
    answer, *calls = first.response_schema["anyOf"]
    assert first.tools == () and answer["properties"]["action"]["enum"] == ["answer"]
    read_file = next(c for c in calls if c["properties"]["tool"]["enum"] == ["read_file"])
    assert read_file["properties"]["arguments"]["required"] == ["path"]
    assert "call_tool" in first.messages[0]["content"]  # the system prompt explains the action
    assistant, read = second.messages[-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "read_file" and assistant["content"] is None
    assert read["role"] == "tool" and "port 8123" in read["content"]


def test_coordinating_models_without_tool_calls_call_tools_then_decide(in_process, workspace: Path):
    backend = f"type: scripted, scripted_tool_calls: false, cwd: {workspace}"
    run = in_process(
        f"""
        agents:
          - id: a
            backend:
              {{{backend},
               responses: [{{tool: search_files, args: {{pattern: "port"}}}},
                           {{tool: new_answer, args: {{content: "8123"}}}},
                           {{tool: vote, args: {{agent_id: agent1, reason: "found it"}}}}]}}
          - id: b
            backend:
              {{{backend},
               responses: [{{tool: vote, args: {{agent_id: agent1, reason: "agreed"}}}}]}}
        orchestrator:
          final_presentation: reuse
        """
    )
    result = run.app.ask("Which port?")
    assert result.winner == "a" and result.final_answer == "8123"
    found = [e for e in events_of(run, "ToolFinished") if e["agent_id"] == "a"]
    assert [e["name"] for e in found] == ["search_files"] and found[0]["ok"]
    assert json.loads((attempt_folder(run) / "summary.json").read_text())["tool_calls"]["a"]["calls"] == 1

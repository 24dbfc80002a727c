"""Faults that end a run from outside: one provider's garbage (a malformed event, a body that is not
JSON, a line of 50 MB), SIGTERM with SIGINT inherited ignored, and a SIGKILL of the runner while an
agent's command runs. The healthy agent's answer is kept, every started attempt has its summary.json,
the exit code is the documented one, and no process is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import (
    first_attempt_folder,
    process_gone,
    processes_with,
    spawn_waiting_child,
    wait_until,
    write_config,
)
from tests.faults.test_tool_faults import RUN_BOUND_S, run_massgen
from tests.servers.fake_providers import FakeProviderServer, Reply, openai_stream

HUGE_LINE_BYTES = 50 * 1024 * 1024


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def wire_backend(provider: FakeProviderServer) -> str:
    """A backend on the wire-format server, not retried (each fault is that agent's at once)."""
    url = f"{provider.root_url}/v1"
    return f"{{type: chatcompletion, model: fake-model, base_url: {url}, api_key: sk-test, max_retries: 0}}"


def garbage(kind: str) -> Reply:
    good = openai_stream("Half of an answer").frames
    if kind == "malformed-event":
        return Reply(frames=[*good[:2], "data: {not json\n\n", *good[2:]])
    if kind == "not-json-body":
        return Reply(body='{"id": "x", "choices": [oops')
    return Reply(frames=[good[0], 'data: {"x": "' + "y" * HUGE_LINE_BYTES + '"}\n\n', *good[1:]])


EXPECTED = {
    "malformed-event": "sent data that is not valid JSON (Expecting property name",
    "not-json-body": "answered with application/json, not an event stream, and its body is not valid JSON",
    "huge-line": "sent a line over 8 MB",
}


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_one_providers_garbage_is_that_agents_failure(tmp_path: Path, provider, kind: str):
    provider.script(garbage(kind))
    write_config(
        tmp_path,
        f"""
        agents:
          - id: good
            backend:
              type: scripted
              responses:
                - {{tool: new_answer, args: {{content: "Paris."}}}}
                - {{tool: vote, args: {{agent_id: agent1, reason: "correct"}}}}
          - id: broken
            backend: {wire_backend(provider)}
        orchestrator: {{final_presentation: reuse}}
        """,
    )
    result = run_massgen("--config", "config.yaml", "Capital of France?", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "Paris.\n"
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["winner"] == "good"
    status = summary["agent_status"]["broken"]
    assert status["status"] == "failed" and EXPECTED[kind] in status["detail"], status
    assert "unexpected" not in result.stderr and "a bug" not in result.stderr


def slow_agent_config(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
        agent:
          id: slow
          backend: {type: scripted, responses: [{text: "thinking", delay: 300}]}
        """,
    )


def requested() -> bool:
    """Whether the run has sent its first request (its turn is under way)."""
    try:
        return (first_attempt_folder() / "requests").is_dir()
    except (FileNotFoundError, StopIteration):
        return False


def test_sigterm_ends_the_run_even_with_sigint_inherited_ignored(tmp_path: Path):
    slow_agent_config(tmp_path)
    runner = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "Slow?"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `massgen … &` in a script
    )
    try:
        wait_until(requested, RUN_BOUND_S)
        runner.send_signal(signal.SIGTERM)
        stdout, stderr = runner.communicate(timeout=RUN_BOUND_S)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 143, stderr
    assert stdout == "" and "terminated: the running turn was cancelled" in stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["end_reason"].startswith("cancelled") and summary["final_answer"] is None


@pytest.mark.parametrize("mode", ["local", "local_unsandboxed"])
def test_sigkill_of_the_runner_ends_the_command_it_was_running(tmp_path: Path, mode: str):
    command, marker = spawn_waiting_child()
    write_config(
        tmp_path,
        f"""
        agent:
          id: runner
          backend:
            type: scripted
            cwd: {tmp_path / "ws"}
            enable_mcp_command_line: true
            command_line_execution_mode: {mode}
            responses:
              - {{tool: execute_command, args: {{command: {json.dumps(command)}, timeout_seconds: 600}}}}
              - "Done."
        """,
    )
    runner = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "Run it."],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    try:
        wait_until(lambda: bool(processes_with(marker)), RUN_BOUND_S)
        children = processes_with(marker)
        runner.kill()
        runner.wait(timeout=RUN_BOUND_S)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert all(process_gone(pid, RUN_BOUND_S) for pid in children), "a command outlived its runner"


def test_a_failed_turn_leaves_stdout_empty_and_its_summary(tmp_path: Path, provider):
    provider.script(Reply(frames=openai_stream("A partial answer that never ends").frames, cut_after=3))
    write_config(
        tmp_path,
        f"""
        agent:
          id: cut
          backend: {wire_backend(provider)}
        """,
    )
    result = run_massgen("--config", "config.yaml", "Question?", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout == "", "stdout is for the final answer alone"
    assert "was cut mid-response" in result.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["final_answer"] is None and summary["agent_status"]["cut"]["status"] == "failed"

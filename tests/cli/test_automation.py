"""What a script reads of a run: ``--automation`` (the log folder on the first lines of stdout, no progress,
``status.json`` in it, MassGen's exit codes), ``--stream-events`` (every event as its ``events.jsonl``
line on stdout, the final answer last) and ``--output-file``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from massgen_cli.events_json import event_from_dict
from massgen_cli.session import read_session
from tests.cli.in_process_cli import massgen
from tests.cli.test_closed_pipe import LONG_ANSWER, assert_quiet_end, first_line_then_close
from tests.conftest import first_attempt_folder, state_folder, wait_until, write_config
from tests.scripted import answer, scripted, vote

THREE_AGENTS = "@examples/scripted_three_agents"
SHIPPED_ANSWER = "The capital of France is Paris, its largest city."


def status_of(log_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((log_dir / "status.json").read_text())


def test_automation_names_the_log_folder_first_and_keeps_its_status(tmp_path: Path):
    result = massgen("--automation", "-c", THREE_AGENTS, "Capital of France?")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "", "no progress, no live view"
    log_line, status_line, answer_line = result.stdout.splitlines()
    log_dir = Path(log_line.removeprefix("LOG_DIR: "))
    assert log_dir.is_absolute() and (log_dir / "turn_1" / "attempt_1" / "summary.json").is_file()
    assert status_line == f"STATUS: {log_dir / 'status.json'}"
    assert answer_line == SHIPPED_ANSWER
    status = status_of(log_dir)
    assert (status["finish_reason"], status["is_complete"], status["exit_code"]) == ("completed", True, 0)
    assert status["coordination"]["phase"] == "done"
    assert status["meta"]["question"] == "Capital of France?"
    assert status["meta"]["elapsed_seconds"] > 0
    agents = status["agents"]
    assert {agent_id: agent["status"] for agent_id, agent in agents.items()} == dict.fromkeys(
        ["agent_a", "agent_b", "agent_c"], "completed"
    )
    assert agents["agent_b"]["latest_answer"] == "Paris is the capital and largest city of France."
    assert agents["agent_c"]["vote_cast"] == {"voted_for_agent": "agent_b", "reason_preview": "clearest"}
    assert status["results"]["winner"] == "agent_b"
    assert status["results"]["votes"] == {"agent_b": 3}
    assert status["results"]["final_answer"] == SHIPPED_ANSWER
    summary = json.loads((log_dir / "turn_1" / "attempt_1" / "summary.json").read_text())
    spent = sum(usage["input_tokens"] for usage in summary["usage"].values())
    assert status["costs"]["total_input_tokens"] == spent > 0
    assert status["costs"]["total_estimated_cost"] == 0.0, "scripted agents are free"


def slow_single_agent(folder: Path) -> None:
    write_config(
        folder,
        scripted(
            {"solo": [{"text": "Thinking", "delay": 60}]},
            timeout_settings={"orchestrator_timeout_seconds": 1},
        ),
    )


def failing_single_agent(folder: Path) -> None:
    write_config(folder, scripted({"solo": [{"error": 500}]}, backends={"solo": {"max_retries": 0}}))


@pytest.mark.parametrize(
    ("arrange", "arguments", "automated", "plain", "reason"),
    [
        (failing_single_agent, ["-c", "config.yaml", "Q?"], 2, 1, "error"),
        (slow_single_agent, ["-c", "config.yaml", "Q?"], 3, 1, "timeout"),
        (failing_single_agent, ["-c", "missing.yaml", "Q?"], 1, 2, None),
        (failing_single_agent, ["-c", "config.yaml", " "], 1, 2, None),
    ],
    ids=["no answer", "timeout", "config error", "usage error"],
)  # fmt: skip
def test_automation_ends_with_massgens_exit_codes(
    tmp_path: Path, arrange, arguments, automated, plain, reason
):
    arrange(tmp_path)
    result = massgen("--automation", *arguments)
    assert result.exit_code == automated, result.stderr
    assert "error:" in result.stderr
    if reason is None:  # refused before a run: no log folder
        assert result.stdout == ""
    else:
        log_dir = Path(result.stdout.splitlines()[0].removeprefix("LOG_DIR: "))
        status = status_of(log_dir)
        assert (status["finish_reason"], status["exit_code"], status["is_complete"]) == (
            reason,
            automated,
            True,
        )
        assert status["results"]["final_answer"] is None
        assert status["agents"]["solo"]["status"] == "error"
    assert massgen(*arguments).exit_code == plain, "without --automation, the usual codes"


def test_an_interrupted_automation_run_exits_4_and_says_so_in_its_status(tmp_path: Path):
    write_config(
        tmp_path,
        scripted({"fast": [answer("Paris.")], "slow": [{"text": "Still thinking", "delay": 120}]}),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--automation", "-c", "config.yaml", "Capital of France?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    log_dir = Path(process.stdout.readline().removeprefix("LOG_DIR: ").strip())
    # its answer, which stays (its status moves on at once when its script has nothing more to say)
    wait_until(lambda: status_of(log_dir)["agents"]["fast"]["latest_answer"] == "Paris.")
    assert status_of(log_dir)["finish_reason"] == "in_progress", "the status is kept as the run goes"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 4, stderr
    status = status_of(log_dir)
    assert (status["finish_reason"], status["exit_code"], status["is_complete"]) == ("interrupted", 4, True)
    assert status["agents"]["fast"]["latest_answer"] == "Paris."


def test_stream_events_prints_the_log_events_as_they_happen_and_the_answer_last():
    result = massgen("--stream-events", "-c", THREE_AGENTS, "Capital of France?")
    assert result.exit_code == 0, result.stderr
    streamed = [json.loads(line) for line in result.stdout.splitlines()]
    assert streamed[-1]["type"] == "FinalAnswer"
    assert streamed[-1]["text"] == SHIPPED_ANSWER and streamed[-1]["agent_id"] == "agent_b"
    assert [event["type"] for event in streamed].count("FinalAnswer") == 1
    for event in streamed:
        event_from_dict(event)  # each line is an event of the vocabulary
    logged = [json.loads(line) for line in (first_attempt_folder() / "events.jsonl").read_text().splitlines()]

    def same(events: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        """The events without their time, the final answer apart (the stream holds it back to the end)."""
        kept = [{k: v for k, v in e.items() if k != "time"} for e in events if e["type"] != "FinalAnswer"]
        return [e for e in kept if e["type"] != "MemoryRecorded"]

    assert same(streamed) == same(logged)
    assert result.stderr.startswith("LOG_DIR: "), "the automation lines go to stderr: stdout is the events'"
    assert status_of(Path(result.stderr.splitlines()[0].removeprefix("LOG_DIR: ")))["exit_code"] == 0


def test_output_file_gets_the_final_answer(tmp_path: Path):
    write_config(tmp_path, scripted({"solo": ["Paris.\n\nIt is the capital."]}))
    result = massgen("-c", "config.yaml", "--output-file", "out/answer.md", "Capital?")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out" / "answer.md").read_text() == "Paris.\n\nIt is the capital."
    automated = massgen("--automation", "-c", "config.yaml", "--output-file", "answer.txt", "Capital?")
    assert automated.exit_code == 0, automated.stderr
    assert automated.stdout.splitlines()[-1] == f"OUTPUT_FILE: {tmp_path / 'answer.txt'}"
    assert (tmp_path / "answer.txt").read_text() == "Paris.\n\nIt is the capital."
    (tmp_path / "folder").mkdir()
    refused = massgen("-c", "config.yaml", "--output-file", "folder", "Capital?")
    assert refused.exit_code == 2 and "--output-file folder is a folder" in refused.stderr


def test_automation_and_stream_events_run_one_question(tmp_path: Path):
    write_config(tmp_path, scripted({"a": [answer("x"), vote("a", "mine")]}))
    for flag in ("--automation", "--stream-events"):
        result = massgen(flag, "-c", "config.yaml")
        assert result.exit_code == 1, "a usage error, in MassGen's automation codes"
        assert f"{flag} runs one question" in result.stderr


def test_an_event_stream_whose_reader_goes_away_ends_quietly_and_the_run_is_kept(tmp_path: Path):
    write_config(tmp_path, scripted({"solo": [LONG_ANSWER]}))
    arguments = ["--stream-events", "-c", "config.yaml", "--session", "piped", "Q?"]
    line, code, errors = first_line_then_close(*arguments)
    assert json.loads(line)["type"] == "AgentText"
    assert_quiet_end(code, errors)
    assert read_session(state_folder(), "piped").exchanges[0].answer == LONG_ANSWER

"""The massgen command end to end, in a subprocess: exit codes, stdout/stderr split, sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli, write_config

ONE_AGENT = """
agent:
  id: solo
  backend:
    type: scripted
    responses:
      - "First answer."
      - "Second answer."
"""


def latest_log_dir() -> Path:
    logs = sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir())
    return logs[-1]


def test_answer_alone_on_stdout_and_exit_zero(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    result = run_cli("--config", str(config), "What is up?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "First answer.\n"
    assert "Turn 1 ended" in result.stderr


def test_shipped_three_agent_demo_coordinates_to_a_winner():
    result = run_cli("--config", "@examples/scripted_three_agents", "What is the capital of France?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The capital of France is Paris, its largest city.\n"
    summary = json.loads((latest_log_dir() / "turn_1" / "attempt_1" / "summary.json").read_text())
    assert summary["winner"] == "agent_b"
    assert summary["session_id"].startswith("temp_")


def test_config_error_exits_2_with_yaml_path(tmp_path):
    config = write_config(tmp_path, "agents:\n  - id: a\n    backend: {type: opnai, model: gpt-4o}\n")
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "agents[0].backend.type: unknown backend 'opnai' (did you mean 'openai'?)" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_api_key_names_the_variable(tmp_path):
    config = write_config(tmp_path, "agent:\n  backend: {model: gpt-4o-mini}\n")
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr


def test_turn_without_answer_exits_1_with_reason(tmp_path):
    config = write_config(
        tmp_path,
        "agent:\n  backend: {type: scripted, responses: [{error: 500}], max_retries: 1,"
        " retry_base_delay_seconds: 0}\n",
    )
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 1
    assert "no answer" in result.stderr and "HTTP 500" in result.stderr
    assert "retry 1" in result.stderr


def test_debug_shows_traceback(tmp_path):
    result = run_cli("--debug", "--config", str(tmp_path / "missing.yaml"), "Q?", process=True)
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "ConfigError" in result.stderr


def test_version_and_help():
    assert run_cli("--version").stdout.startswith("massgen-cli ")
    help_text = run_cli("--help").stdout
    assert "--config" in help_text and "--session" in help_text and "--state-dir" in help_text


def test_piped_stdin_runs_one_turn_per_line_and_turn_two_sees_turn_one(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    result = run_cli("--config", str(config), stdin="first question\nsecond question\n/quit\nignored\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "First answer.\nSecond answer.\n"
    request = json.loads(
        (latest_log_dir() / "turn_2" / "attempt_1" / "requests" / "solo_001.json").read_text()
    )
    assert [m["content"] for m in request["messages"]] == [
        "first question",
        "First answer.",
        "second question",
    ]


def test_session_continues_in_a_second_process(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    first = run_cli("--config", str(config), "--session", "project_x", "first question")
    assert first.returncode == 0, first.stderr
    second = run_cli("--config", str(config), "--session", "project_x", "second question")
    assert second.returncode == 0, second.stderr
    log = latest_log_dir()
    assert (log / "turn_2" / "attempt_1" / "summary.json").is_file()
    assert not (log / "turn_1").exists()
    request = json.loads((log / "turn_2" / "attempt_1" / "requests" / "solo_001.json").read_text())
    assert request["messages"][0]["content"] == "first question"
    listing = run_cli("sessions", "list")
    assert listing.returncode == 0
    assert listing.stdout.startswith("project_x\tturns=2")


def test_session_name_in_config_names_the_session(tmp_path):
    config = write_config(
        tmp_path, ONE_AGENT + "memory:\n  persistent_memory:\n    session_name: from_yaml\n"
    )
    assert run_cli("--config", str(config), "Q?").returncode == 0
    assert run_cli("sessions", "list").stdout.startswith("from_yaml\t")


def test_question_starting_with_a_subcommand_word_goes_after_double_dash(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    result = run_cli("--config", str(config), "--", "sessions are what?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "First answer.\n"


def test_state_dir_flag_moves_state(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    result = run_cli("--state-dir", str(tmp_path / "elsewhere"), "--config", str(config), "Q?")
    assert result.returncode == 0
    assert (tmp_path / "elsewhere" / "sessions").is_dir()


def test_a_failed_turn_keeps_its_number_and_its_logs(tmp_path):
    config = write_config(
        tmp_path,
        "agent:\n  id: solo\n  backend:\n    type: scripted\n    max_retries: 0\n"
        "    responses: [{error: 500}, 'Second.']\n",
    )
    result = run_cli("--config", str(config), stdin="first\nsecond\n")
    assert result.returncode == 1 and result.stdout == "Second.\n"
    log = latest_log_dir()
    first = json.loads((log / "turn_1" / "attempt_1" / "summary.json").read_text())
    second = json.loads((log / "turn_2" / "attempt_1" / "summary.json").read_text())
    assert (first["question"], first["final_answer"]) == ("first", None)
    assert (second["question"], second["final_answer"]) == ("second", "Second.")


def test_session_ids_cannot_escape_the_sessions_folder(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    for bad in ("..", ".", ".hidden"):
        result = run_cli("--config", str(config), "--session", bad, "Q?")
        assert result.returncode == 2 and "must start with a letter or digit" in result.stderr


def test_single_agent_obeys_the_step_timeout(tmp_path):
    config = write_config(
        tmp_path,
        "agent:\n  backend: {type: scripted, responses: [{text: 'late', delay: 30}]}\n"
        "orchestrator: {step_timeout_seconds: 0.5}\n",
    )
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 1 and "timed out after 0.5s" in result.stderr


def test_a_presentation_that_breaks_off_leaves_only_the_final_answer_on_a_pipe(tmp_path):
    config = write_config(
        tmp_path,
        """
        agents:
          - id: a
            backend:
              type: scripted
              responses:
                - {tool: new_answer, args: {content: "The winning answer."}}
                - {tool: vote, args: {agent_id: agent1, reason: "mine"}}
                - {text: "A presentation that", delay: 30}
          - id: b
            backend:
              type: scripted
              responses: [{tool: vote, args: {agent_id: agent1, reason: "ok"}, delay: 0.2}]
        orchestrator: {step_timeout_seconds: 1}
        """,
    )
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The winning answer.\n"  # a pipe gets the final answer alone, never a part
    assert "presentation by a failed" in result.stderr


def test_conversation_memory_off_sends_no_earlier_turns(tmp_path):
    config = write_config(tmp_path, ONE_AGENT + "memory:\n  conversation_memory: {enabled: false}\n")
    assert run_cli("--config", str(config), stdin="first question\nsecond question\n").returncode == 0
    request = json.loads(
        (latest_log_dir() / "turn_2" / "attempt_1" / "requests" / "solo_001.json").read_text()
    )
    assert [m["content"] for m in request["messages"]] == ["second question"]


def test_a_damaged_session_file_is_a_clear_error_and_is_kept(tmp_path):
    config = write_config(tmp_path, ONE_AGENT)
    assert run_cli("--config", str(config), "--session", "s1", "Q?").returncode == 0
    record = Path(os.environ["MASSGEN_HOME"]) / "sessions" / "s1" / "session.json"
    record.write_text("{not json")
    result = run_cli("--config", str(config), "--session", "s1", "Q?")
    assert result.returncode == 1 and "cannot read the session record" in result.stderr
    assert record.read_text() == "{not json"


def test_quiet_still_says_in_full_that_commands_run_unconfined(tmp_path):
    config = write_config(
        tmp_path,
        """
        agent:
          id: runner
          backend:
            type: scripted
            enable_mcp_command_line: true
            command_line_execution_mode: local_unsandboxed
            permission_mode: default
            responses: ["Done."]
        """,
    )
    unconfined = (
        "agent.backend.command_line_execution_mode: 'local_unsandboxed': runner's commands run unconfined"
    )
    for options in ([], ["-q"]):
        result = run_cli("--config", str(config), *options, "List the files.")
        assert result.returncode == 0 and result.stdout == "Done.\n", result.stderr
        assert unconfined in result.stderr and "able to read and write anything you can" in result.stderr
    assert "1 config setting(s) ignored or run differently here" in result.stderr, "the rest as a count"

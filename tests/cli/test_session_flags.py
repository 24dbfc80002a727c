"""MassGen's session flags on the question command: ``--session-id`` (``--session``), ``--continue`` (the
state folder's most recent session, with its config), ``--list-sessions``; and what is refused before a
turn runs: an empty question, an empty session id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config
from tests.scripted import scripted
from tests.servers.fake_providers import FakeProviderServer, openai_stream

TWO_TURNS = scripted({"solo": ["First answer.", "Second answer."]})


def session_record(session_id: str) -> dict:  # type: ignore[type-arg]
    return json.loads((state_folder() / "sessions" / session_id / "session.json").read_text())


def test_session_id_names_the_session_and_list_sessions_lists_it(tmp_path: Path):
    write_config(tmp_path, TWO_TURNS)
    result = massgen("-c", "config.yaml", "--session-id", "kept", "Q?")
    assert result.exit_code == 0, result.stderr
    assert session_record("kept")["turns_completed"] == 1
    listed = massgen("--list-sessions")
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout == massgen("sessions", "list").stdout
    assert listed.stdout.startswith("kept\tturns=1\t")


def test_continue_takes_the_latest_session_with_its_config(tmp_path: Path):
    write_config(tmp_path, TWO_TURNS)
    assert massgen("-c", "config.yaml", "--session", "older", "Q1?").exit_code == 0
    first = massgen("-c", "config.yaml", "Q1?")
    assert first.exit_code == 0, first.stderr
    [latest] = [p.name for p in (state_folder() / "sessions").iterdir() if p.name.startswith("temp_")]
    result = massgen("--continue", "Q2?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "First answer.\n", "the session's scripted config, not the embedded default"
    assert f"continuing session {latest}" in result.stderr
    record = session_record(latest)
    assert record["turns_completed"] == 2
    assert [exchange["question"] for exchange in record["exchanges"]] == ["Q1?", "Q2?"]
    assert session_record("older")["turns_completed"] == 1


def test_continue_with_nothing_to_continue_is_a_clear_error():
    result = massgen("--continue", "Q?")
    assert result.exit_code == 2
    assert "no session to continue" in result.stderr and "--list-sessions" in result.stderr
    result = massgen("--continue", "--session", "x", "Q?")
    assert result.exit_code == 2
    assert "does not combine with --session" in result.stderr


def test_continue_of_a_quick_start_session_runs_its_agents_without_the_flags_again():
    """A session started from the command line's agents was refused by `--continue` unless every flag
    was given again; its agents are kept with it now (the flags may still be given)."""
    fake = FakeProviderServer().start()
    try:
        fake.script(openai_stream("One."), openai_stream("Two."), openai_stream("Three."))
        quick = ["--backend", "vllm", "--base-url", f"{fake.root_url}/v1", "--model", "m"]
        assert massgen(*quick, "Q1?").exit_code == 0
        continued = massgen("--continue", "Q2?")
        again = massgen("--continue", *quick, "Q3?")
    finally:
        fake.stop()
    assert continued.exit_code == 0, continued.stderr
    assert continued.stdout == "Two.\n" and again.stdout == "Three.\n", again.stderr
    assert [m["content"] for m in fake.requests[2].body["messages"] if m["role"] == "user"] == [
        "Q1?",
        "Q2?",
        "Q3?",
    ]
    assert fake.requests[1].body["model"] == "m"


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_usage_error_and_runs_no_turn(tmp_path: Path, question: str):
    write_config(tmp_path, TWO_TURNS)
    result = massgen("-c", "config.yaml", question)
    assert result.exit_code == 2
    assert "the question is empty" in result.stderr
    assert result.stdout == ""
    assert not (state_folder() / "massgen_logs").exists()


@pytest.mark.parametrize("session", ["", " "])
def test_an_empty_session_id_is_a_usage_error_not_a_temporary_session(tmp_path: Path, session: str):
    write_config(tmp_path, TWO_TURNS)
    result = massgen("-c", "config.yaml", "--session", session, "Q?")
    assert result.exit_code == 2
    assert "--session needs a session id" in result.stderr
    assert not list((state_folder() / "sessions").glob("*"))

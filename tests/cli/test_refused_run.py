"""A run refused before its first turn (a config error, a missing API key) leaves no session and no lock;
continuing a session by name still works, and a refused run does not touch the session it named."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.session import read_session, sessions_root
from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config
from tests.scripted import scripted

NO_KEY = "agent:\n  backend: {model: gpt-4o-mini}\n"
MISSING_CONTEXT_PATH = """
agent:
  backend: {type: scripted, responses: [x]}
orchestrator:
  context_paths:
    - path: missing_folder
"""
ONE_AGENT = scripted({"solo": ["First answer.", "Second answer."]})


def sessions_left() -> list[Path]:
    return sorted(sessions_root(state_folder()).glob("*")) if sessions_root(state_folder()).is_dir() else []


def test_a_missing_api_key_leaves_no_session_and_no_lock(tmp_path: Path):
    write_config(tmp_path, NO_KEY)
    for args in (["Q?"], ["--session", "fresh", "Q?"]):
        result = massgen("--config", "config.yaml", *args)
        assert result.exit_code == 2 and "OPENAI_API_KEY" in result.stderr
    assert sessions_left() == []
    assert list(state_folder().rglob(".lock")) == []
    assert "no sessions yet" in massgen("sessions", "list").stderr


def test_a_config_error_found_as_the_agents_are_built_leaves_no_session(tmp_path: Path):
    write_config(tmp_path, MISSING_CONTEXT_PATH)
    result = massgen("--config", "config.yaml", "Q?")
    assert result.exit_code == 2
    assert "orchestrator.context_paths[0].path: missing_folder does not exist" in result.stderr
    assert sessions_left() == []


def test_a_refused_run_leaves_the_session_it_names_as_it_was_and_it_continues(tmp_path: Path):
    write_config(tmp_path, ONE_AGENT)
    assert massgen("--config", "config.yaml", "--session", "trip", "Q1?").exit_code == 0
    write_config(tmp_path, NO_KEY, name="no_key.yaml")
    refused = massgen("--config", "no_key.yaml", "--session", "trip", "Q2?")
    assert refused.exit_code == 2
    record = read_session(state_folder(), "trip")
    assert (record.turns_started, record.turns_completed) == (1, 1)
    again = massgen("--config", "config.yaml", "--session", "trip", "Q2?")
    assert again.exit_code == 0, again.stderr
    assert read_session(state_folder(), "trip").turns_completed == 2


def test_an_interactive_session_without_a_question_is_not_kept(tmp_path: Path):
    write_config(tmp_path, ONE_AGENT)
    result = massgen("--config", "config.yaml", stdin="/quit\n")
    assert result.exit_code == 0, result.stderr
    assert "Session session_" in result.stderr and "saved" not in result.stderr
    assert sessions_left() == []
    asked = massgen("--config", "config.yaml", stdin="Q?\n")
    assert asked.exit_code == 0 and "saved; continue it with --session session_" in asked.stderr
    assert len(sessions_left()) == 1


def test_a_refused_run_keeps_a_session_folder_that_was_there_without_a_record(tmp_path: Path):
    """A folder holding a session's threads and memory files but no session.json was not made by the
    refused run: it stays as it was."""
    folder = sessions_root(state_folder()) / "kept"
    (folder / "threads").mkdir(parents=True)
    (folder / "threads" / "solo.json").write_text("[]")
    (folder / "memory_files.json").write_text("{}")
    write_config(tmp_path, NO_KEY)
    refused = massgen("--config", "config.yaml", "--session", "kept", "Q?")
    assert refused.exit_code == 2 and "OPENAI_API_KEY" in refused.stderr
    assert (folder / "threads" / "solo.json").read_text() == "[]"
    assert (folder / "memory_files.json").read_text() == "{}"

"""`massgen sessions delete ID…` and `massgen sessions prune --older-than AGE`: a session goes with its
record, lock, threads and run log folders; its long-term memories only with --memories; a session a running
massgen holds is refused."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from massgen_cli.cli.session_commands import parse_age
from massgen_cli.session import open_session, sessions_root
from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli, state_folder, write_config
from tests.scripted import scripted

ONE_AGENT = scripted({"solo": ["The answer."]})
REMEMBERING = ONE_AGENT + "memory:\n  enabled: true\n  persistent_memory: {enabled: true}\n"


def answered(  # type: ignore[no-untyped-def]
    in_process, session_id: str | None = None, config: str = ONE_AGENT, question: str = "Which ferry?"
) -> str:
    """A session with one answered turn (its record, threads and a run log folder); its id."""
    run = in_process(config, session_id=session_id)
    assert run.app.ask(question).final_answer == "The answer."
    run.app.close()
    return str(run.app.session.id)


def log_folders_of(session_id: str) -> set[Path]:
    logs = state_folder() / "massgen_logs"
    return {
        summary.parents[2]
        for summary in logs.glob("log_*/turn_*/attempt_*/summary.json")
        if json.loads(summary.read_text())["session_id"] == session_id
    }


def test_delete_asks_then_removes_the_session_and_its_logs_and_nothing_else(in_process):
    gone, kept = answered(in_process, "gone"), answered(in_process, "kept")
    folder = sessions_root(state_folder()) / gone
    assert {"session.json", ".lock"} <= {path.name for path in folder.iterdir()}
    assert len(log_folders_of(gone)) == 1 and len(log_folders_of(kept)) == 1

    refused = massgen("sessions", "delete", gone)
    assert refused.exit_code == 2 and "Add --yes" in refused.stderr and folder.is_dir()

    deleted = massgen("sessions", "delete", gone, "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    said = deleted.stderr.replace("\n", " ")
    assert f"deleted session {gone}: its folder {folder} (session.json" in said
    assert "1 run log folder(s)" in said and "long-term memories stay" in said
    assert not folder.exists() and not log_folders_of(gone)
    assert len(log_folders_of(kept)) == 1
    assert massgen("sessions", "list").stdout.startswith("kept\tturns=1")


def test_delete_of_an_unknown_session_deletes_none_of_those_named(in_process):
    kept = answered(in_process, "kept")
    result = massgen("sessions", "delete", kept, "nope", "--yes")
    assert result.exit_code == 2 and "no session nope" in result.stderr
    assert (sessions_root(state_folder()) / kept / "session.json").is_file()


def test_a_session_a_running_massgen_holds_is_refused(in_process):
    busy = answered(in_process, "busy")
    held = open_session(state_folder(), busy, interactive=False, config_path=None)
    try:
        refused = run_cli("sessions", "delete", busy, "--yes")
        assert refused.returncode == 2
        assert f"session busy is in use by massgen process {os.getpid()}; it is kept" in refused.stderr
        assert (sessions_root(state_folder()) / busy / "session.json").is_file()
    finally:
        held.close()
    assert massgen("sessions", "delete", busy, "--yes").exit_code == 0
    assert not (sessions_root(state_folder()) / busy).exists()


def test_delete_with_memories_clears_only_what_that_session_recorded(in_process, tmp_path: Path):
    gone = answered(in_process, "gone", REMEMBERING, "Which ferry leaves first?")
    kept = answered(in_process, "kept", REMEMBERING, "Which ferry leaves last?")
    config = str(write_config(tmp_path, REMEMBERING))

    def memories_of(session_id: str) -> list[str]:
        listed = massgen("memory", "list", "--config", config, "--session", session_id, "--json")
        return [json.loads(line)["text"] for line in listed.stdout.splitlines()]

    assert set(memories_of(gone)) == {"Which ferry leaves first?", "The answer."}
    assert set(memories_of(kept)) == {"Which ferry leaves last?", "The answer."}
    deleted = massgen("sessions", "delete", gone, "--memories", "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    assert "1 long-term memory" in deleted.stderr and "memories stay" not in deleted.stderr
    assert memories_of(gone) == ["The answer."]  # recorded in the other session too: it stays
    assert set(memories_of(kept)) == {"Which ferry leaves last?", "The answer."}


def last_used(session_id: str, days_ago: float) -> None:
    """Make a session look unused for ``days_ago`` days, as its record would say."""
    path = sessions_root(state_folder()) / session_id / "session.json"
    record = json.loads(path.read_text())
    record["updated_at"] = (datetime.now() - timedelta(days=days_ago)).isoformat(timespec="seconds")
    path.write_text(json.dumps(record))


def test_prune_lists_then_deletes_the_sessions_unused_for_longer_than_the_age(in_process):
    old_temp, fresh_temp, old_named = answered(in_process), answered(in_process), answered(in_process, "trip")
    assert old_temp.startswith("temp_") and fresh_temp.startswith("temp_")
    last_used(old_temp, 8)
    last_used(old_named, 15)

    dry = massgen("sessions", "prune", "--older-than", "7d", "--dry-run")
    assert dry.exit_code == 0 and "2 session(s) would be deleted" in dry.stderr
    assert {line.split("\t")[0] for line in dry.stdout.splitlines()} == {old_temp, old_named}
    assert len(massgen("sessions", "list").stdout.splitlines()) == 3

    asks = massgen("sessions", "prune", "--older-than", "7d")
    assert asks.exit_code == 2 and "Add --yes" in asks.stderr

    temp_only = massgen("sessions", "prune", "--older-than", "1w", "--temp", "--yes")
    assert temp_only.exit_code == 0, temp_only.stderr
    assert temp_only.stdout.split("\t")[0] == old_temp and "deleted 1 of 1 session(s)" in temp_only.stderr
    assert not log_folders_of(old_temp)
    remaining = {line.split("\t")[0] for line in massgen("sessions", "list").stdout.splitlines()}
    assert remaining == {fresh_temp, old_named}

    assert massgen("sessions", "prune", "--older-than", "2w", "--yes").exit_code == 0
    assert massgen("sessions", "list").stdout.split("\t")[0] == fresh_temp
    nothing = massgen("sessions", "prune", "--older-than", "12h", "--yes")
    assert nothing.exit_code == 0 and "no sessions unused for more than 12h" in nothing.stderr


def test_prune_keeps_a_session_in_use(in_process):
    busy = answered(in_process, "busy")
    last_used(busy, 30)
    held = open_session(state_folder(), busy, interactive=False, config_path=None)
    try:
        result = run_cli("sessions", "prune", "--older-than", "7d", "--yes")
    finally:
        held.close()
    assert result.returncode == 0, result.stderr
    assert "session busy is in use" in result.stderr and "deleted 0 of 1 session(s)" in result.stderr
    assert (sessions_root(state_folder()) / busy / "session.json").is_file()


@pytest.mark.parametrize(
    ("age", "duration"), [("12h", timedelta(hours=12)), ("7d", timedelta(days=7)), ("2w", timedelta(days=14))]
)
def test_ages_read_as_durations(age: str, duration: timedelta):
    assert parse_age(age) == duration


def test_an_age_without_a_unit_is_a_usage_error():
    result = massgen("sessions", "prune", "--older-than", "7")
    assert result.exit_code == 2 and "--older-than '7': give a number and a unit" in result.stderr

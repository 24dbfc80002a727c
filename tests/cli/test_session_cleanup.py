"""`massgen sessions delete ID…` and `massgen sessions prune --older-than AGE`: a session goes with its
record, lock, threads and run log folders; its long-term memories only with --memories; a session a running
massgen holds is refused."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
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


def test_delete_with_memories_of_several_sessions_clears_those_they_share(in_process, tmp_path: Path):
    first = answered(in_process, "first", REMEMBERING, "Which ferry leaves first?")
    second = answered(in_process, "second", REMEMBERING, "Which ferry leaves last?")
    config = str(write_config(tmp_path, REMEMBERING))

    def memories() -> set[str]:
        listed = massgen("memory", "list", "--config", config, "--json")
        return {json.loads(line)["text"] for line in listed.stdout.splitlines()}

    assert memories() == {"Which ferry leaves first?", "Which ferry leaves last?", "The answer."}
    deleted = massgen("sessions", "delete", first, second, "--memories", "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    assert "deleted 3 long-term memories recorded only in them" in deleted.stderr.replace("\n", " ")
    assert memories() == set()  # "The answer.", recorded in both, went too


def test_delete_removes_the_sessions_report(in_process):
    gone, kept = answered(in_process, "gone"), answered(in_process, "kept")
    reports = [state_folder() / "massgen_logs" / f"report_{name}.html" for name in (gone, kept)]
    for name in (gone, kept):
        assert massgen("logs", "report", name).exit_code == 0
    assert all(report.is_file() for report in reports)
    deleted = massgen("sessions", "delete", gone, "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    assert f"its report {reports[0]}" in deleted.stderr.replace("\n", "")
    assert not reports[0].exists() and reports[1].is_file()


def test_delete_finds_the_logs_of_a_record_written_before_records_listed_them(in_process):
    """Such a record, continued since, lists only the later runs: the earlier are found by a scan."""
    old, kept = answered(in_process, "old"), answered(in_process, "kept")
    path = sessions_root(state_folder()) / old / "session.json"
    record = json.loads(path.read_text())
    del record["log_folders"], record["lists_all_runs"]
    path.write_text(json.dumps(record))
    answered(in_process, old)
    assert len(json.loads(path.read_text())["log_folders"]) == 1 and len(log_folders_of(old)) == 2
    assert massgen("sessions", "delete", old, "--yes").exit_code == 0
    assert not log_folders_of(old) and len(log_folders_of(kept)) == 1


def test_delete_takes_the_log_folders_the_record_lists(in_process):
    gone = answered(in_process, "gone")
    listed = json.loads((sessions_root(state_folder()) / gone / "session.json").read_text())["log_folders"]
    assert [folder.name for folder in log_folders_of(gone)] == listed
    attempt = state_folder() / "massgen_logs" / listed[0] / "turn_1" / "attempt_1"
    for name in ("events.jsonl", "summary.json"):
        (attempt / name).unlink()
    deleted = massgen("sessions", "delete", gone, "--yes")  # a scan could no longer tell whose it is
    assert deleted.exit_code == 0 and "1 run log folder(s)" in deleted.stderr
    assert not (state_folder() / "massgen_logs" / listed[0]).exists()


def test_prune_keeps_a_session_used_while_it_asked(in_process):
    """The session is listed as old, then used while the question waits for an answer: it stays."""
    used = answered(in_process, "used")
    last_used(used, 30)
    master, slave = pty.openpty()
    command = [sys.executable, "-m", "massgen_cli", "sessions", "prune", "--older-than", "7d"]
    env = dict(os.environ)
    with subprocess.Popen(command, stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=env) as process:
        os.close(slave)
        said = read_until(master, "Delete these 1 session(s)?")
        last_used(used, 0)  # a run took a turn in it meanwhile
        os.write(master, b"y\n")
        said += read_until(master, "of 1 session(s)")
        assert process.wait(timeout=120) == 0
    os.close(master)
    assert "session used was used since it was listed; it is kept" in said
    assert "deleted 0 of 1 session(s)" in said
    assert (sessions_root(state_folder()) / used / "session.json").is_file() and log_folders_of(used)


def read_until(terminal: int, text: str) -> str:
    """What the command wrote to the terminal until ``text`` (its end, when it never comes)."""
    said = ""
    while text not in said.replace("\r", "").replace("\n", " "):
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # the command ended
            break
        if not chunk:
            break
        said += chunk.decode("utf-8", errors="replace")
    return said.replace("\r", "").replace("\n", " ")


def planted_logs(session_id: str, outside: Path) -> list[str]:
    """Rewrite a session's record, as anything that can write the state folder could, to list folders
    outside the log root: an absolute path, a path that climbs out, and a link to the outside planted in
    the log root."""
    logs = state_folder() / "massgen_logs"
    link = logs / "log_20200101_000000_000000"
    link.symlink_to(outside, target_is_directory=True)
    path = sessions_root(state_folder()) / session_id / "session.json"
    record = json.loads(path.read_text())
    listed = [str(outside), f"../../{outside.name}", f"../{outside.name}", link.name]
    record["log_folders"] += listed
    path.write_text(json.dumps(record))
    return listed


def test_delete_and_prune_remove_only_run_log_folders_under_the_log_root(in_process):
    outside = state_folder().parent / "precious"
    outside.mkdir()
    (outside / "id_ed25519").write_text("a key")
    gone, old = answered(in_process, "gone"), answered(in_process)
    for session_id in (gone, old):
        assert len(log_folders_of(session_id)) == 1, "each has its own run log folder"
    listed = planted_logs(gone, outside)
    record = json.loads((sessions_root(state_folder()) / gone / "session.json").read_text())
    assert set(listed) <= set(record["log_folders"]), "the record names the outside folder"

    deleted = massgen("sessions", "delete", gone, "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    assert "1 run log folder(s)" in deleted.stderr.replace("\n", " "), "only its own"
    assert (outside / "id_ed25519").read_text() == "a key"
    assert not log_folders_of(gone)

    (state_folder() / "massgen_logs" / "log_20200101_000000_000000").unlink()
    planted_logs(old, outside)
    last_used(old, 8)
    dry = massgen("sessions", "prune", "--older-than", "7d", "--temp", "--dry-run")
    assert dry.exit_code == 0 and str(outside) not in dry.stdout + dry.stderr
    pruned = massgen("sessions", "prune", "--older-than", "7d", "--temp", "--yes")
    assert pruned.exit_code == 0, pruned.stderr
    assert (outside / "id_ed25519").read_text() == "a key" and not log_folders_of(old)

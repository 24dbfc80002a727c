"""A state folder the run cannot write (read-only, or refusing writes as a full disk does), a damaged
memory index, and a memory LLM that is down: the turn completes without the failing part, says so once,
and nothing on disk is changed or overwritten."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli, state_folder, write_config
from tests.security.test_memory_spool import CONFIG
from tests.servers.postgres import free_port

UNSAVED = "cannot be written"
DAC_CAPABILITIES = "-dac_override,-dac_read_search,-fowner"


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def run_without_override(*args: str) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` as a process that file permissions apply to: root keeps its user id but loses
    the capabilities that let it write anywhere (``setpriv``); any other user runs as it is."""
    command = [sys.executable, "-m", "massgen_cli", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root ignores file permissions and setpriv (util-linux) is not installed")
        command = [setpriv, "--bounding-set", DAC_CAPABILITIES, "--", *command]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=dict(os.environ), check=False
    )


def make_read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_a_read_only_state_folder_answers_continues_the_session_and_writes_nothing(tmp_path: Path):
    write_config(tmp_path, CONFIG)
    first = run_cli("--config", "config.yaml", "--session", "ferry", "When does the ferry leave?")
    assert first.returncode == 0, first.stderr
    make_read_only(state_folder())
    before = fingerprint(state_folder())
    try:
        again = run_without_override("--config", "config.yaml", "--session", "ferry", "And the pier?")
        fresh = run_without_override("--config", "config.yaml", "A new question?")
    finally:
        for path in [state_folder(), *state_folder().rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    for run in (again, fresh):
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "The ferry leaves at 06:40 from pier 3."
        assert run.stderr.count(UNSAVED) == 1 and "Permission denied" in run.stderr, run.stderr
        assert "long-term memory is off" not in run.stderr, "said once, in the one line"
    assert "Turn 2 ended" in again.stderr, "the session's history was read and continued"
    assert fingerprint(state_folder()) == before


def _refuse_writes_past_64_kib() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_state_folder_that_refuses_writes_still_answers(tmp_path: Path):
    """The process may not grow a file past 64 KiB (what a nearly full disk does to the writes that need
    room): the check fails with EFBIG, and the run answers without saving."""
    write_config(tmp_path, CONFIG)
    run = subprocess.run(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "--session", "ferry", "When?"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        check=False,
        preexec_fn=_refuse_writes_past_64_kib,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "The ferry leaves at 06:40 from pier 3."
    assert run.stderr.count(UNSAVED) == 1 and "File too large" in run.stderr, run.stderr
    assert not (state_folder() / "sessions" / "ferry").exists()
    assert not (state_folder() / "massgen_logs").exists()


@pytest.mark.parametrize(
    ("damaged_file", "said"),
    [
        ("memory/index.db", "the memory index at {path} is damaged"),
        ("qdrant/meta.json", "store at {folder} is damaged"),
    ],
)
def test_a_damaged_memory_file_is_named_and_left_as_it_is(tmp_path: Path, damaged_file: str, said: str):
    write_config(tmp_path, CONFIG)
    first = massgen("--config", "config.yaml", "--session", "ferry", "When does the ferry leave?")
    assert first.exit_code == 0, first.stderr
    path = state_folder() / damaged_file
    damaged = b"this is not what was written" * 500
    path.write_bytes(damaged)
    run = massgen("--config", "config.yaml", "--session", "ferry", "And the pier?")
    assert run.exit_code == 0, run.stderr
    assert "06:40" in run.stdout
    assert said.format(path=path, folder=path.parent) in run.stderr, run.stderr
    assert "a bug" not in run.stderr, "a damaged file is not reported as a bug"
    assert path.read_bytes() == damaged
    spooled = (state_folder() / "memory" / "spool.jsonl").read_text()
    assert "06:40" in spooled, "the turn's records wait in the spool"


def test_a_memory_llm_that_is_down_stores_verbatim_and_says_so_once(tmp_path: Path):
    down = f"http://127.0.0.1:{free_port()}/v1"
    llm = f"{{provider: openai, model: gpt-4.1-nano, api_key: sk-test-memory, base_url: '{down}'}}"
    write_config(tmp_path, CONFIG.replace("{enabled: true}", f"{{enabled: true, llm: {llm}}}"))
    run = run_cli("--config", "config.yaml", "--session", "ferry", "When does the ferry leave?")
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("the memory LLM failed") == 1, run.stderr
    assert not any(line.startswith("LLM extraction failed") for line in run.stderr.splitlines()), run.stderr
    listing = massgen("memory", "list", "--json")
    texts = {json.loads(line)["text"] for line in listing.stdout.splitlines()}
    assert "The ferry leaves at 06:40 from pier 3." in texts, "stored verbatim, not lost"

"""Hostile or broken input: a clear error and exit 2 where it is the user's input, and nothing written
outside the state folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_config

SCRIPTED = "agent: {backend: {type: scripted, responses: [Fine.]}}\n"


def alias_bomb() -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 10)]
    return SCRIPTED + "\n".join(lines) + "\nui: *l9\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (alias_bomb(), "which makes it an alias bomb, so it was not read further"),
        (SCRIPTED + "ui: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        (SCRIPTED + "# " + "x" * (6 * 1024 * 1024) + "\n", "a config may be at most 5 MB"),
        ("agents: 5\n", "agents: input should be a valid list"),
        (
            "agent: {backend: {type: scripted, responses: [hi], temperature: hot}}\n",
            "agent.backend.temperature",
        ),
    ],
    ids=["alias-bomb", "deep-nesting", "50MB-class-file", "wrong-type", "wrong-scalar"],
)
def test_hostile_yaml_is_a_clear_error(tmp_path: Path, text: str, message: str):
    write_config(tmp_path, text)
    result = run_cli("--config", "config.yaml", "Q?")
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr and "Traceback" not in result.stderr
    assert {p.name for p in tmp_path.iterdir()} <= {"config.yaml", "state"}, "nothing written elsewhere"


def test_a_folder_as_config_and_bad_session_ids(tmp_path: Path):
    folder = run_cli("--config", str(tmp_path), "Q?")
    assert folder.returncode == 2 and "is a folder; --config takes a YAML file" in folder.stderr
    write_config(tmp_path, SCRIPTED)
    for session in ("../escape", "a/b", "/etc"):
        result = run_cli("--config", "config.yaml", "--session", session, "Q?")
        assert result.returncode == 2 and f"session id '{session}'" in result.stderr
    assert not (tmp_path.parent / "escape").exists()


def piped(tmp_path: Path, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml"],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )


def test_stdin_that_is_not_text_is_refused_and_a_huge_question_is_answered(tmp_path: Path):
    write_config(tmp_path, SCRIPTED)
    binary = piped(tmp_path, bytes(range(256)) * 8)
    assert binary.returncode == 2 and b"standard input is binary data" in binary.stderr
    latin = piped(tmp_path, b"first question\n" + "caf\xe9\n".encode("latin-1"))
    assert latin.returncode == 2 and b"line 2 of standard input is not UTF-8 text" in latin.stderr
    assert latin.stdout == b"Fine.\n", "the turn before the bad line was answered"
    huge = piped(tmp_path, ("word " * 200_000).encode() + b"\n")
    assert huge.returncode == 0 and huge.stdout == b"Fine.\n", huge.stderr[-2000:]
    unknown = piped(tmp_path, b"/frobnicate\nWhat now?\n")
    assert unknown.returncode == 0 and b"unknown command /frobnicate" in unknown.stderr
    assert unknown.stdout == b"Fine.\n"
    # nothing else written: the config, the state folder and the user's list of state folders
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "state", "user-state"]


def test_a_state_folder_that_is_no_folder_is_refused_and_left_as_it_is(tmp_path: Path):
    write_config(tmp_path, SCRIPTED)
    shared_file = tmp_path / "shared-file"
    shared_file.write_text("everyone's\n")
    shared_file.chmod(0o666)
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    for target, said in ((shared_file, "is not a folder"), (tmp_path / "loop_a", "cannot be used")):
        for command in (("sessions", "list"), ("--config", "config.yaml", "Q?")):
            result = run_cli("--state-dir", str(target), *command)
            assert result.returncode == 2 and said in result.stderr, result.stderr
            assert "Traceback" not in result.stderr and "--state-dir or MASSGEN_HOME" in result.stderr
    assert oct(shared_file.stat().st_mode & 0o777) == oct(0o666), "its mode is left as it was"
    assert shared_file.read_text() == "everyone's\n"

"""A command whose stdout's reader goes away (`massgen … | head -1`) ends quietly with exit 0, as coreutils
do: no `BrokenPipeError`, no error line. Each command runs in a subprocess writing to a real pipe of one
page, read for one line and then closed, so the command surely writes after its reader is gone."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from massgen_cli.session import Exchange, open_session, read_session
from tests.conftest import run_cli, state_folder, write_config
from tests.scripted import scripted

PIPE_BYTES = 4096
LONG_ANSWER = "\n".join(f"line {n}: the harbour ferry leaves every hour on the hour" for n in range(2000))
MEMORY_CONFIG = """
agent:
  backend: {type: scripted, responses: [x]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def first_line_then_close(*args: str) -> tuple[str, int, str]:
    """``massgen ARGS`` with stdout to a one-page pipe: its first line, once the reader has closed the
    pipe after reading it (as ``head -1`` does), the exit code and stderr."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    command = [sys.executable, "-m", "massgen_cli", *args]
    with subprocess.Popen(command, stdout=write_end, stderr=subprocess.PIPE, env=dict(os.environ)) as process:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            line = reader.readline().decode()
        _, errors = process.communicate(timeout=300)
    return line, process.returncode, errors.decode()


def assert_quiet_end(code: int, errors: str) -> None:
    assert code == 0, errors
    for sign in ("BrokenPipe", "Broken pipe", "Exception ignored", "Traceback", "error:"):
        assert sign not in errors, errors


def test_the_answer_to_a_closed_pipe_ends_the_run_quietly_and_the_turn_is_kept(tmp_path: Path):
    write_config(tmp_path, scripted({"solo": [LONG_ANSWER]}))
    line, code, errors = first_line_then_close("--config", "config.yaml", "--session", "piped", "Q?")
    assert line == "line 0: the harbour ferry leaves every hour on the hour\n"
    assert_quiet_end(code, errors)
    record = read_session(state_folder(), "piped")
    assert record.turns_completed == 1 and record.exchanges[0].answer == LONG_ANSWER


def test_sessions_list_and_show_to_a_closed_pipe(tmp_path: Path):
    for number in range(600):
        session = open_session(state_folder(), f"s{number:04d}", interactive=False, config_path=None)
        session.begin_turn()
        session.close()
    busy = open_session(state_folder(), "busy", interactive=False, config_path=None)
    busy.record.exchanges = [Exchange(turn, f"question {turn}", "answer", "solo") for turn in range(1, 401)]
    busy.record.turns_started = busy.record.turns_completed = 400
    busy.save()
    busy.close()
    line, code, errors = first_line_then_close("sessions", "list")
    made = {"busy", *(f"s{number:04d}" for number in range(600))}
    assert line.split("\t")[0] in made and "\tturns=" in line, "a session's line, the latest first"
    assert_quiet_end(code, errors)
    line, code, errors = first_line_then_close("sessions", "show", "busy")  # a Rich table on stdout
    assert "Session busy" in line
    assert_quiet_end(code, errors)


def test_memory_list_and_search_to_a_closed_pipe(tmp_path: Path):
    config = write_config(tmp_path, MEMORY_CONFIG)
    facts = tmp_path / "facts.jsonl"
    facts.write_text(
        "".join(
            json.dumps({"content": f"Ferry {n} leaves the harbour at {n % 24}:00 on weekdays."}) + "\n"
            for n in range(120)
        )
    )
    imported = run_cli("memory", "import", str(facts), "--config", str(config), "--session", "kb")
    assert imported.returncode == 0, imported.stderr
    commands = (
        ("memory", "list", "--json"),
        ("memory", "list"),
        ("memory", "search", "ferry", "--json", "--limit", "120"),
    )
    for args in commands:
        line, code, errors = first_line_then_close(*args, "--config", str(config))
        assert "Ferry" in line, (args, line, errors)
        assert_quiet_end(code, errors)


def test_a_closed_stderr_is_a_failure_and_not_a_quiet_end(tmp_path: Path):
    """Rich hands stdout to /dev/null when stderr's reader is gone: that is no sign of stdout's reader
    going away, and a run whose answer file stays empty must not exit 0."""
    write_config(tmp_path, scripted({"a": ["one"], "b": ["two"]}))
    read_end, write_end = os.pipe()
    os.close(read_end)  # stderr's reader is gone before the first progress line
    with (tmp_path / "ans.txt").open("wb") as answer:
        command = [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "Q?"]
        with subprocess.Popen(command, stdout=answer, stderr=write_end, env=dict(os.environ)) as process:
            os.close(write_end)
            process.wait(timeout=300)
    assert process.returncode == 1
    assert (tmp_path / "ans.txt").read_text() == ""


def test_a_broken_pipe_that_is_not_stdouts_reaches_the_error_path(capsys):
    from massgen_cli.cli.guard import STDOUT_BROKEN, guarded

    def child_went_away() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    assert not STDOUT_BROKEN.is_set()
    with pytest.raises(typer.Exit) as ended:
        guarded(False, child_went_away)
    assert ended.value.exit_code == 1
    assert "error: the system refused an operation: Broken pipe" in capsys.readouterr().err

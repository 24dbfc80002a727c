"""A question in its plain form is read without Typer (``cli/plain_question``): what it runs is what
Typer's command runs with the same line, and every other form is still Typer's to read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.cli import commands
from massgen_cli.cli.main import SUBCOMMANDS
from massgen_cli.cli.plain_question import plain_question
from tests.cli.in_process_cli import massgen
from tests.cli.typer_check import run_telling_typer

PLAIN_LINES = [
    ["What is 2+2?"],
    ["-c", "x.yaml", "-q", "Q?"],
    ["Q?", "--config", "@examples/scripted_single", "--debug"],
    ["--session", "s1", "--state-dir", "st", "Q?", "--quiet"],
    ["--session-id", "s2", "Q?"],
]


@pytest.fixture
def asked(monkeypatch) -> list[Any]:
    """The options each ``ask_or_chat`` call received (nothing is asked)."""
    calls: list[Any] = []

    def record(options: Any) -> int:
        calls.append(options)
        return 0

    monkeypatch.setattr(commands, "ask_or_chat", record)
    return calls


@pytest.mark.parametrize("line", PLAIN_LINES)
def test_a_plain_question_runs_what_typers_command_runs(line, asked):
    assert massgen(*line).exit_code == 0
    options = plain_question(line, SUBCOMMANDS)
    assert options is not None
    assert [options] == asked


@pytest.mark.parametrize(
    "line",
    [
        [],
        ["-q"],
        ["--help"],
        ["Q?", "-h"],
        ["Q?", "--config=x.yaml"],
        ["Q?", "-c"],
        ["Q?", "-c", "--quiet"],
        ["Q?", "-q", "-q"],
        ["Q?", "--session", "a", "--session-id", "b"],
        ["Q?", "other"],
        ["Q?", "--automation"],
        ["Q?", "--model", "gpt-4o"],
        ["--", "-q"],
        ["", "-q"],
        ["memory", "-q"],
        ["sessions"],
    ],
)
def test_every_other_form_is_left_to_typer(line):
    assert plain_question(line, SUBCOMMANDS) is None


def test_a_plain_question_from_the_shell_does_not_import_typer(tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text("agent: {id: solo, backend: {type: scripted, responses: ['forty-two']}}\n")
    line = ["-c", str(config), "--state-dir", str(tmp_path / "st"), "What is 6 x 7?"]
    for extra, typer_imported in (([], False), (["--max-cost", "1"], True)):
        ended = run_telling_typer([*line, *extra])
        assert ended.returncode == 0, ended.stderr
        assert ended.stdout.splitlines() == ["forty-two", f"typer imported: {typer_imported}"]


def test_a_mistake_in_a_plain_question_ends_as_typers_would(tmp_path: Path):
    """The plain path maps errors to exit codes as the Typer command does: a config problem is a usage
    error (2) with its YAML path, said once on stderr."""
    config = tmp_path / "config.yaml"
    config.write_text("agent: {id: solo, backend: {type: opnai, model: m}}\n")
    ended = subprocess.run(
        [sys.executable, "-m", "massgen_cli", "-c", str(config), "--state-dir", str(tmp_path / "st"), "Q?"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ended.returncode == 2
    assert "agent.backend.type: unknown backend 'opnai' (did you mean 'openai'?)" in ended.stderr
    assert ended.stdout == ""

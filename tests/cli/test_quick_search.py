"""``massgen memory search`` in its plain form is read without Typer (``cli/quick_search``): what it runs
is what Typer's command runs with the same line, and every other form is still Typer's to read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from massgen_cli.cli import memory_commands
from massgen_cli.cli.quick_search import _search, plain_search
from tests.cli.in_process_cli import massgen
from tests.cli.typer_check import run_telling_typer

PLAIN_LINES = [
    ["memory", "search", "ferry"],
    ["memory", "search", "when did Ana sail?", "--limit", "3", "--json", "--context", "0"],
    ["memory", "search", "--session", "kb", "pier", "--agent", "a1", "--method", "lexical", "--debug"],
    ["memory", "search", "boat", "-c", "x.yaml", "--state-dir", "st", "--since", "May 2023"],
    ["memory", "search", "boat", "--until", "2023-06-30", "--domain", "d", "--task-type", "t"],
    ["memory", "search", "boat", "--method", "dense", "--context", "4", "--limit", "100"],
]


@pytest.fixture
def searches(monkeypatch) -> list[dict[str, Any]]:
    """What each ``memory_commands.search`` call received (nothing is searched)."""
    calls: list[dict[str, Any]] = []

    def record(query: str, config: Any, state_dir: Any, scope: Any, **options: Any) -> int:
        calls.append({"query": query, "config": config, "state_dir": state_dir, "scope": scope, **options})
        return 0

    monkeypatch.setattr(memory_commands, "search", record)
    return calls


@pytest.mark.parametrize("line", PLAIN_LINES)
def test_a_plain_search_runs_what_typers_command_runs(line, searches):
    assert massgen(*line).exit_code == 0
    call = plain_search(line)
    assert call is not None
    assert _search(call) == 0
    through_typer, quick = searches
    assert quick == through_typer


@pytest.mark.parametrize(
    "line",
    [
        ["memory", "search"],
        ["memory", "search", "--help"],
        ["memory", "search", "q", "-h"],
        ["memory", "search", "q", "--limit", "0"],
        ["memory", "search", "q", "--limit", "-3"],
        ["memory", "search", "q", "--limit", "three"],
        ["memory", "search", "q", "--context", "-1"],
        ["memory", "search", "q", "--limit=3"],
        ["memory", "search", "q", "--limit"],
        ["memory", "search", "q", "--json", "--json"],
        ["memory", "search", "q", "--session", "a", "--session", "b"],
        ["memory", "search", "q", "other"],
        ["memory", "search", "q", "--method", "fuzzy"],
        ["memory", "search", "q", "--bogus"],
        ["memory", "search", "--", "-q"],
        ["--state-dir", "st", "memory", "search", "q"],
        ["memory", "list"],
        ["what is memory search?"],
    ],
)
def test_every_other_form_is_left_to_typer(line):
    assert plain_search(line) is None


def test_a_mistake_is_said_in_typers_words(tmp_path):
    """Typer reads a line the plain reader leaves, and says what is wrong as it always did."""
    wrong = massgen("memory", "search", "ferry", "--limit", "0", "--state-dir", str(tmp_path))
    assert wrong.exit_code == 2
    assert "Invalid value for '--limit'" in wrong.stderr


def test_a_plain_search_from_the_shell_does_not_import_typer(tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text("memory: {enabled: true, persistent_memory: {enabled: true}}\n")
    line = ["memory", "search", "ferry", "--config", str(config), "--state-dir", str(tmp_path / "st")]
    for extra, typer_imported in (([], False), (["--limit=3"], True)):
        ended = run_telling_typer([*line, *extra])
        assert ended.returncode == 0, ended.stderr
        assert "no memories found" in ended.stderr
        assert f"typer imported: {typer_imported}" in ended.stdout

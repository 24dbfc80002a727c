"""A subcommand's options mean the same before its name as after it: `massgen --state-dir X sessions list`
is `massgen sessions list --state-dir X`."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.cli.admin import admin_app
from massgen_cli.cli.main import route
from massgen_cli.cli.run_app import run_app
from tests.cli.in_process_cli import massgen
from tests.conftest import write_config
from tests.scripted import scripted

ONE_AGENT = scripted({"solo": ["The answer."]})


def test_options_before_a_subcommand_move_after_its_name():
    assert route(["--state-dir", "X", "--debug", "sessions", "list"]) == (
        admin_app,
        ["sessions", "list", "--state-dir", "X", "--debug"],
    )
    assert route(["-c", "f.yaml", "batch", "q.jsonl", "--out", "o"]) == (
        admin_app,
        ["batch", "-c", "f.yaml", "q.jsonl", "--out", "o"],
    )
    assert route(["sessions", "--state-dir=X", "show", "s1"]) == (
        admin_app,
        ["sessions", "show", "--state-dir=X", "s1"],
    )


def test_a_question_and_what_follows_a_double_dash_are_left_as_they_are():
    assert route(["--state-dir", "X", "What is up?"]) == (run_app, ["--state-dir", "X", "What is up?"])
    assert route(["-c", "f.yaml", "--", "sessions are what?"]) == (
        run_app,
        ["-c", "f.yaml", "--", "sessions are what?"],
    )


def test_state_dir_before_or_after_the_subcommand_finds_the_same_sessions(tmp_path: Path):
    write_config(tmp_path, ONE_AGENT)
    elsewhere = str(tmp_path / "elsewhere")
    asked = massgen("--state-dir", elsewhere, "--config", "config.yaml", "--session", "kept", "Q?")
    assert asked.exit_code == 0, asked.stderr
    assert asked.stdout == "The answer.\n"
    listings = [
        massgen("--state-dir", elsewhere, "sessions", "list"),
        massgen("sessions", "--state-dir", elsewhere, "list"),
        massgen("sessions", "list", "--state-dir", elsewhere),
        massgen("--debug", "sessions", "list", "--state-dir", elsewhere),
    ]
    for listing in listings:
        assert listing.exit_code == 0, listing.stderr
        assert listing.stdout.startswith("kept\tturns=1\t")
    default_place = massgen("sessions", "list")
    assert default_place.exit_code == 0 and default_place.stdout == ""
    assert "no sessions yet" in default_place.stderr
    shown = massgen("--state-dir", elsewhere, "sessions", "show", "kept", "--json")
    assert shown.exit_code == 0 and '"session_id": "kept"' in shown.stdout


def test_config_before_batch_is_the_batch_config(tmp_path: Path):
    write_config(tmp_path, ONE_AGENT)
    (tmp_path / "questions.jsonl").write_text('{"id": "q1", "question": "Q?"}\n')
    result = massgen("-c", "config.yaml", "batch", "questions.jsonl", "--out", "out.jsonl")
    assert result.exit_code == 0, result.stderr
    assert '"final_answer": "The answer."' in (tmp_path / "out.jsonl").read_text()


def test_an_option_the_subcommand_does_not_take_is_refused_by_name():
    result = massgen("--quiet", "sessions", "list")
    assert result.exit_code == 2
    assert "No such option: --quiet" in result.stderr
    assert "massgen sessions list" in result.stderr

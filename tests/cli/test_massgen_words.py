"""MassGen's command words are usage errors that say what does the job here, before any config is read or
model called; ``massgen -- WORD`` still asks the word."""

from __future__ import annotations

import pytest

from massgen_cli.cli.main import _refuse_massgen_words
from massgen_cli.cli.massgen_words import MASSGEN_WORDS
from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli_process, state_folder


@pytest.mark.parametrize(
    "args",
    [[word] for word in MASSGEN_WORDS]
    + [["export", "log_1"], ["--state-dir", "x", "viewer"], ["--setup"], ["--quickstart"], ["--init"]],
)
def test_a_massgen_word_is_a_usage_error_saying_what_does_the_job(args, capsys):
    with pytest.raises(SystemExit) as ended:
        _refuse_massgen_words([*args, "--config", "@examples/scripted_single"])
    assert ended.value.code == 2
    said = capsys.readouterr().err
    assert "is a MassGen" in said and "massgen " in said.split(":", 2)[2], said


def test_the_command_line_refuses_the_word_before_any_run():
    refused = run_cli_process("--config", "@examples/scripted_single", "viewer")
    assert refused.returncode == 2 and "'viewer' is a MassGen command" in refused.stderr
    assert refused.stdout == "" and not (state_folder() / "massgen_logs").exists(), "no run began"


def test_the_word_after_end_of_options_is_a_question(tmp_path):
    answered = massgen("--config", "@examples/scripted_single", "--state-dir", str(tmp_path), "--", "viewer")
    assert answered.exit_code == 0 and answered.stdout.strip(), answered.stderr

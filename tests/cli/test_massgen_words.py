"""MassGen's command words are usage errors that say what does the job here, before any config is read or
model called; ``massgen -- WORD`` still asks the word."""

from __future__ import annotations

import pytest

from massgen_cli.backends.scripted import ScriptedBackend
from massgen_cli.cli.main import main
from massgen_cli.cli.massgen_words import MASSGEN_WORDS
from tests.cli.in_process_cli import massgen


@pytest.mark.parametrize(
    "args",
    [[word] for word in MASSGEN_WORDS]
    + [["export", "log_1"], ["--state-dir", "x", "viewer"], ["--setup"], ["--quickstart"], ["--init"]],
)
def test_a_massgen_word_is_a_usage_error_saying_what_does_the_job(args, capsys, monkeypatch):
    asked: list[object] = []
    monkeypatch.setattr(ScriptedBackend, "stream", lambda *a, **k: asked.append(a))
    with pytest.raises(SystemExit) as ended:
        main([*args, "--config", "@examples/scripted_single"])
    assert ended.value.code == 2 and asked == [], "no model was called"
    said = capsys.readouterr().err
    assert "is a MassGen" in said and "massgen " in said.split(":", 2)[2], said


def test_the_word_after_end_of_options_is_a_question(tmp_path):
    answered = massgen("--config", "@examples/scripted_single", "--state-dir", str(tmp_path), "--", "viewer")
    assert answered.exit_code == 0 and answered.stdout.strip(), answered.stderr

"""The interactive prompt on a real (pseudo-)terminal: line editing with a history kept across sessions
in the state folder, Ctrl-C cancels the running turn, Ctrl-C at the prompt drops the line, Ctrl-D
leaves."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.cli.pty_terminal import CTRL_C, CTRL_D, ENTER, UP, Terminal
from tests.conftest import state_folder, write_config

QUESTION = "What is the capital of France?"


def ask_on_a_terminal(config: Path, *keys: str) -> Terminal:
    terminal = Terminal(["--config", str(config), "--session", "chat"])
    terminal.expect("you:")
    for key in keys:
        terminal.type(key)
    return terminal


def summary(turn: int) -> dict:  # type: ignore[type-arg]
    found = list((state_folder() / "massgen_logs").glob(f"*/turn_{turn}/attempt_1/summary.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())


def test_arrow_up_recalls_a_question_of_an_earlier_run(tmp_path: Path):
    config = write_config(tmp_path, "agent: {id: solo, backend: {type: scripted, responses: ['Paris.']}}\n")
    first = ask_on_a_terminal(config, QUESTION + ENTER)
    try:
        answered = first.expect("Paris.")
        first.expect("you:", after=answered)
        first.type(CTRL_D)
        assert first.wait() == 0, first.screen
    finally:
        first.close()
    history = state_folder() / "prompt_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600, "it holds what was asked: its user's only"
    assert QUESTION in history.read_text()

    second = ask_on_a_terminal(config, UP)
    try:
        second.expect(QUESTION, after=second.expect("you:"))  # recalled onto the prompt line
        second.type(ENTER)
        second.expect("you:", after=second.expect("Turn 2 ended"))
        second.type(CTRL_D)
        assert second.wait() == 0, second.screen
    finally:
        second.close()
    assert summary(2)["question"] == QUESTION, "the recalled line was asked as turn 2"


def test_ctrl_c_cancels_the_turn_once_said_and_ctrl_d_leaves(tmp_path: Path):
    config = write_config(
        tmp_path,
        """
        agent:
          id: solo
          backend:
            type: scripted
            responses: [{text: "Partial", delay: 60}, "Second answer."]
        """,
    )
    terminal = ask_on_a_terminal(config, "slow question" + ENTER)
    try:
        streaming = terminal.expect("Partial")
        terminal.type(CTRL_C)
        cancelled = terminal.expect("turn cancelled; the session goes on", after=streaming)
        terminal.expect("you:", after=cancelled)
        terminal.type("never asked" + CTRL_C)  # at the prompt: the line is dropped, the session stays
        dropped = terminal.expect("Ctrl-D or /quit leaves", after=cancelled)
        terminal.expect("you:", after=dropped)
        terminal.type("second question" + ENTER)
        terminal.expect("Second answer.", after=dropped)
        terminal.expect("you:", after=terminal.expect("Turn 2 ended"))
        terminal.type(CTRL_D)
        assert terminal.wait() == 0, terminal.screen
    finally:
        terminal.close()
    assert terminal.screen.count("cancelled") == 1, "the cancelled turn is said once"
    assert "Session chat saved" in terminal.screen
    assert summary(2)["question"] == "second question"

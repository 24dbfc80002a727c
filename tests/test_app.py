"""The library's session loop: a turn cancelled from another thread, even just before it starts; the
listeners the caller gives, which hear every event, and those that follow the turns hear when each
begins and ends."""

from __future__ import annotations

import asyncio

import pytest

from massgen_cli.app import MassGenApp
from massgen_cli.config import load_config
from massgen_cli.events import FinalAnswer, RunEvent
from massgen_cli.listeners import turn_listeners
from tests.conftest import write_config
from tests.serve.serving import echo_agent


def test_a_cancel_that_comes_before_the_turn_starts_cancels_that_turn_only(in_process):
    run = in_process(echo_agent())
    run.app.cancel_running_turn()  # from a server or a batch, as the turn is about to begin
    with pytest.raises(asyncio.CancelledError):
        run.app.ask("codeword-first")
    assert run.app.session.record.turns_started == 0, "it ended before it began"
    assert run.app.ask("codeword-second").final_answer == "You said codeword-second."


class TurnsHeard:
    """A listener that also follows the turns (``listeners.TurnListener``), noting what it hears."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    def __call__(self, event: RunEvent) -> None:
        self.heard.append(type(event).__name__)

    def begin_turn(self) -> None:
        self.heard.append("begin")

    def end_turn(self) -> None:
        self.heard.append("end")

    def cancel_turn(self) -> None:
        self.heard.append("cancel")


def test_every_listener_hears_the_run_and_a_turn_listener_is_told_of_its_turns(tmp_path):
    events: list[RunEvent] = []
    turns = TurnsHeard()
    loaded = load_config(write_config(tmp_path, echo_agent()))
    app = MassGenApp(loaded, listeners=(events.append, turns), state_dir=tmp_path / "state")
    try:
        assert app.ask("codeword-one").final_answer == "You said codeword-one."
        app.ask("codeword-two")
    finally:
        app.close()
    assert [type(event).__name__ for event in events].count("TurnEnded") == 2
    assert any(isinstance(event, FinalAnswer) for event in events)
    said = [name for name in turns.heard if name not in {"begin", "end"}]
    assert said == [type(event).__name__ for event in events], "both heard every event, in order"
    marks = [name for name in turns.heard if name in {"begin", "end", "cancel"}]
    assert marks == ["begin", "end", "begin", "end"]
    assert turns.heard[turns.heard.index("TurnEnded") + 1] == "end", "the turn ends after its last event"


def test_only_listeners_that_follow_turns_are_told_of_them():
    events: list[RunEvent] = []
    turns = TurnsHeard()
    assert turn_listeners((events.append, turns, print)) == [turns]

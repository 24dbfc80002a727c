"""The library's session loop: a turn cancelled from another thread, even just before it starts."""

from __future__ import annotations

import asyncio

import pytest

from tests.serve.serving import echo_agent


def test_a_cancel_that_comes_before_the_turn_starts_cancels_that_turn_only(in_process):
    run = in_process(echo_agent())
    run.app.cancel_running_turn()  # from a server or a batch, as the turn is about to begin
    with pytest.raises(asyncio.CancelledError):
        run.app.ask("codeword-first")
    assert run.app.session.record.turns_started == 0, "it ended before it began"
    assert run.app.ask("codeword-second").final_answer == "You said codeword-second."

"""The console view of a vote: said from the ``VoteCast`` itself, on its own line without a live view, and
in the voter's panel under its answer with one."""

from __future__ import annotations

import io

from rich.console import Console

from massgen_cli.events import AgentStatus, VoteCast
from massgen_cli.ui import ConsoleView


def shown(*, live: bool) -> str:
    err = io.StringIO()
    console = Console(file=err, width=120, force_terminal=live, color_system=None)
    view = ConsoleView(["a", "b"], console=console, out=io.StringIO(), live=live)
    view.begin_turn()
    for event in (
        AgentStatus("b", "working"),
        AgentStatus("b", "answered", "Paris."),
        VoteCast("b", "a", "the clearest"),
    ):
        view(event)
    view.end_turn()
    return err.getvalue()


def test_a_vote_is_a_line_of_its_own_without_the_live_view():
    assert shown(live=False).splitlines() == ["[b] answered: Paris.", "[b] voted: a: the clearest"]


def test_a_vote_shows_in_the_voters_panel_under_its_answer():
    frames = shown(live=True)
    last = frames[frames.rindex("b · voted") :]
    assert "answer: Paris." in last and "vote → a: the clearest" in last
    assert last.index("answer: Paris.") < last.index("vote → a: the clearest")

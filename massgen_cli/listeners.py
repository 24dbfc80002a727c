"""What hears a run: a listener is any callable of a run event (``events.Listener``: a served request's
stream, the automation lines, the terminal's ``ui.ConsoleView``). A listener that also follows the
turns (``TurnListener``: the console's view, which starts each turn's panels afresh and closes them when
the turn ends or is cancelled) is told when a turn begins, ends or is cancelled, which no event says:
a turn is cancelled by Ctrl-C in the caller's thread, after the turn's last event."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from massgen_cli.events import Listener, RunEvent


@runtime_checkable
class TurnListener(Protocol):
    """A listener told of each turn ``MassGenApp.ask`` runs, around its events."""

    def __call__(self, event: RunEvent) -> None: ...
    def begin_turn(self) -> None: ...
    def end_turn(self) -> None: ...
    def cancel_turn(self) -> None: ...


def turn_listeners(listeners: tuple[Listener, ...]) -> list[TurnListener]:
    """Those of ``listeners`` that follow the turns."""
    return [listener for listener in listeners if isinstance(listener, TurnListener)]

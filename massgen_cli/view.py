"""What a run shows while it works: a ``View`` hears every event and is told when a turn begins, ends or
is cancelled. The terminal's is ``ui.ConsoleView``; ``SilentView`` shows nothing, for runs read through
their events and results (the Python API, ``serve``, ``batch``)."""

from __future__ import annotations

from typing import Protocol

from massgen_cli.events import RunEvent


class View(Protocol):
    quiet: bool
    """Only the answer is shown (no progress, no session lines)."""

    def __call__(self, event: RunEvent) -> None: ...
    def begin_turn(self) -> None: ...
    def end_turn(self) -> None: ...
    def cancel_turn(self) -> None: ...


class SilentView:
    """Shows nothing."""

    quiet = True

    def __call__(self, event: RunEvent) -> None:
        return None

    def begin_turn(self) -> None:
        return None

    def end_turn(self) -> None:
        return None

    def cancel_turn(self) -> None:
        return None

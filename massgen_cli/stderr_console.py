"""The console on stderr, and Rich's markup escaping, with Rich imported only when something is printed."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class StderrConsole:
    """Rich's console on stderr (no highlighting, no wrapping), made on first use: a quiet run with nothing
    to say on stderr never imports Rich (a tenth of what a start adds to the SDK's)."""

    def __init__(self) -> None:
        self._made: Console | None = None

    @property
    def rich(self) -> Console:
        if self._made is None:
            from rich.console import Console

            self._made = Console(stderr=True, highlight=False, soft_wrap=True)
        return self._made

    def print(self, *objects: Any, **options: Any) -> None:
        self.rich.print(*objects, **options)

    @property
    def is_terminal(self) -> bool:
        return self.rich.is_terminal

    @property
    def file(self) -> IO[str]:
        return self.rich.file


def rich_console(console: Console | StderrConsole) -> Console:
    """The Rich console itself (made now if it was not yet)."""
    return console.rich if isinstance(console, StderrConsole) else console


def escape(text: str) -> str:
    """``text`` with what Rich would read as markup escaped."""
    from rich.markup import escape as escape_markup

    return escape_markup(text)

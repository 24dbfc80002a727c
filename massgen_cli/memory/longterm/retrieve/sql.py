"""The SQL that scopes and visibility are written in, for either database that holds the index.

Conditions are written once, with ``?`` for parameters and ``{sources}``, ``{winners}``, ``{stale}`` and
``{names}`` for the tables; a dialect renders them for SQLite (the local index) or PostgreSQL (a server store,
whose tables carry the collection's name)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SqlDialect:
    """How one database spells a parameter and names the index's tables."""

    mark: str = "?"
    sources: str = "sources"
    winners: str = "winners"
    stale: str = "stale"
    names: str = "names"
    arrays: bool = False
    """Whether a list is one array parameter (``= ANY(?)``): a statement's text then stays the same
    whatever the list's length, so the server plans it once."""

    def render(self, condition: str) -> str:
        """``condition`` with this database's table names and parameter marks."""
        named = condition.format(
            sources=self.sources, winners=self.winners, stale=self.stale, names=self.names
        )
        return named.replace("?", self.mark) if self.mark != "?" else named

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """The condition that ``column`` is one of ``values`` (not empty), and its parameters."""
        if self.arrays:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)


SQLITE = SqlDialect()

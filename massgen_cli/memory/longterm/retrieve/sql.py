"""The SQL that scopes and visibility are written in, for either database that holds the index.

Conditions are written once, with ``?`` for parameters and ``{sources}``, ``{winners}``, ``{stale}`` and
``{names}`` for the tables; a dialect renders them for SQLite (the local index) or PostgreSQL (a server store,
whose tables carry the collection's name)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SqlDialect:
    """How one database spells a parameter and names the index's tables."""

    mark: str = "?"
    sources: str = "sources"
    winners: str = "winners"
    stale: str = "stale"
    names: str = "names"

    def render(self, condition: str) -> str:
        """``condition`` with this database's table names and parameter marks."""
        named = condition.format(
            sources=self.sources, winners=self.winners, stale=self.stale, names=self.names
        )
        return named.replace("?", self.mark) if self.mark != "?" else named


SQLITE = SqlDialect()

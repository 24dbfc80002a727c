"""What a search may rank: a scope (a session, an agent, a domain, a task type, a span of days),
turn-aware visibility for an agent, and never what has expired (nor, unless asked, what agents marked
stale). One filter, written once as SQL, restricts every ranking and picks the source each hit is
attributed to."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.retrieve.sql import SQLITE, SqlDialect
from massgen_cli.memory.longterm.retrieve.visibility import WINNERS_JOIN, Viewer, visible_condition


@dataclass(frozen=True)
class SearchFilter:
    """None means any; ``viewer`` adds turn-aware visibility; ``include_stale`` also ranks the memories
    agents marked stale (kept for audit, left out otherwise); ``since`` and ``until`` (both included)
    admit the memories whose own date (``record.dates.memory_day``) lies between them, and none whose
    date is unknown."""

    session_id: str | None = None
    agent_id: str | None = None
    domain: str | None = None
    task_type: str | None = None
    viewer: Viewer | None = None
    include_stale: bool = False
    since: date | None = None
    until: date | None = None

    @property
    def restricts_sources(self) -> bool:
        """Whether only some sessions', agents' or turns' memories are searched (not the whole store)."""
        return bool(self.session_id or self.agent_id or self.viewer is not None)

    def normalized(self) -> SearchFilter:
        """Domain and task type written as keys write them."""
        domain = segment(self.domain) if self.domain else None
        task_type = segment(self.task_type) if self.task_type else None
        return replace(self, domain=domain, task_type=task_type)

    def source_condition(self, dialect: SqlDialect = SQLITE) -> tuple[str, list[Any]]:
        """The condition on ``sources s`` (joined with ``winners w``) for a source that counts."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.session_id:
            clauses.append("s.session_id = ?")
            params.append(self.session_id)
        if self.agent_id:
            clauses.append("s.agent_id = ?")
            params.append(self.agent_id)
        if self.viewer is not None:
            condition, extra = visible_condition(self.viewer)
            clauses.append(f"({condition})")
            params += extra
        return dialect.render(" AND ".join(clauses) or "1=1"), params

    def memory_condition(
        self, now: float | None = None, dialect: SqlDialect = SQLITE
    ) -> tuple[str, list[Any]]:
        """The condition on ``memories m`` for a memory the search may rank."""
        named, params = self.own_condition(now, dialect)
        if self.restricts_sources:
            # Evaluated once, from the sources index, rather than once per memory.
            sources, extra = self.counted_sources(dialect)
            named += f" AND m.id IN ({sources})"
            params += extra
        return named, params

    def own_condition(self, now: float | None = None, dialect: SqlDialect = SQLITE) -> tuple[str, list[Any]]:
        """The part of ``memory_condition`` on the memory's own row: not expired at ``now``, not marked
        stale (unless asked), of the domain and task type asked for."""
        clauses = ["(m.expires_at IS NULL OR m.expires_at > ?)"]
        params: list[Any] = [time.time() if now is None else now]
        if not self.include_stale:
            clauses.append("m.id NOT IN (SELECT memory_id FROM {stale})")
        for column, value in (("domain", self.domain), ("task_type", self.task_type)):
            if value:
                clauses.append(f"m.{column} = ?")
                params.append(value)
        for bound, day in ((">=", self.since), ("<=", self.until)):
            if day is not None:  # ISO days compare as text
                clauses.append(f"m.day {bound} ?")
                params.append(day.isoformat())
        return dialect.render(" AND ".join(clauses)), params

    def counted_sources(self, dialect: SqlDialect = SQLITE) -> tuple[str, list[Any]]:
        """``SELECT s.memory_id ...``: the memories with a source that counts (``source_condition``),
        once per such source."""
        condition, params = self.source_condition(dialect)
        return f"SELECT s.memory_id FROM {dialect.sources} s {self.join(dialect)} WHERE {condition}", params

    def join(self, dialect: SqlDialect = SQLITE) -> str:
        return dialect.render(WINNERS_JOIN) if self.viewer is not None else ""

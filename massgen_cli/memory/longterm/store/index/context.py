"""A hit's neighbours in its session (``retrieve.context``) as SQL, written once for either database
that holds the index: the local SQLite file, whose sources are in ``rowid`` order, and a server's
PostgreSQL tables, whose sources are in ``seq`` order."""

from __future__ import annotations

import time
from typing import Any

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.context import SPREAD, context_scope, memory_scope
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.sql import SqlDialect

SIDE_COLUMNS = "s.memory_id, s.agent_id, s.session_id, s.turn, s.attempt, s.extra"


def source_position(dialect: SqlDialect, position: str) -> str:
    """The query for one source's place in the recorded order (its memory and the four fields that
    make it unique)."""
    mark = dialect.mark
    return (
        f"SELECT {position} FROM {dialect.sources} WHERE memory_id = {mark} AND agent_id = {mark} "
        f"AND session_id = {mark} AND turn = {mark} AND attempt = {mark}"
    )


def position_params(memory_id: str, source: Source) -> list[Any]:
    return [memory_id, source.agent_id, source.session_id, source.turn, source.attempt]


def side_query(
    scope: SearchFilter, dialect: SqlDialect, memories: str, position: str, *, after: bool
) -> tuple[str, list[Any]]:
    """The records of one side of a source in its session that ``scope`` lets a neighbour come from,
    nearest first (``SIDE_COLUMNS``); parameters: the session, the source's position, the hit's memory
    id, then these, then how many to read (``SPREAD`` per neighbour wanted)."""
    seen = context_scope(scope)
    visible, visible_params = seen.source_condition(dialect)
    alive, alive_params = memory_scope(scope).memory_condition(time.time(), dialect)
    mark = dialect.mark
    sql = (
        f"SELECT {SIDE_COLUMNS} FROM {dialect.sources} s {seen.join(dialect)} "
        f"JOIN {memories} m ON m.id = s.memory_id "
        f"WHERE s.session_id = {mark} AND s.{position} {'>' if after else '<'} {mark} "
        f"AND s.memory_id <> {mark} AND {visible} AND {alive} "
        f"ORDER BY s.{position} {'ASC' if after else 'DESC'} LIMIT {mark}"
    )
    return sql, [*visible_params, *alive_params]


def side_params(memory_id: str, source: Source, at: int, scope_params: list[Any], count: int) -> list[Any]:
    """The parameters of ``side_query`` in their order."""
    return [source.session_id, at, memory_id, *scope_params, count * SPREAD]

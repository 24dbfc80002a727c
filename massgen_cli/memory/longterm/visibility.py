"""Turn-aware sharing, as pure functions: who may see which long-term memory.

In turn N of a session an agent sees its own memories and those recorded by the winners of turns
before N; never another agent's records of turn N. A memory recorded several times is visible when
any of its sources is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from massgen_cli.memory.longterm.index import IndexedMemory, Source

Winners = Mapping[tuple[str, int], str]


@dataclass(frozen=True)
class Viewer:
    """Who is asking: an agent in a turn of a session; ``all_sessions`` lifts the session scope."""

    agent_id: str
    session_id: str
    turn: int
    all_sessions: bool = False


def source_visible(source: Source, viewer: Viewer, winners: Winners) -> bool:
    if source.session_id != viewer.session_id and not viewer.all_sessions:
        return False
    if source.agent_id == viewer.agent_id:
        return True
    if source.session_id == viewer.session_id and source.turn >= viewer.turn:
        return False
    return winners.get((source.session_id, source.turn)) == source.agent_id


def visible_source(memory: IndexedMemory, viewer: Viewer, winners: Winners) -> Source | None:
    """The earliest source that makes ``memory`` visible to ``viewer``, or None."""
    return next((s for s in memory.sources if source_visible(s, viewer, winners)), None)

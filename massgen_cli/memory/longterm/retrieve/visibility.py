"""Turn-aware sharing: who may see which long-term memory, as one SQL condition on a memory's sources.

In turn N of a session an agent sees its own memories and those recorded by the winner of an earlier
turn in the attempt that won it; never another agent's records of turn N, and never the records of an
attempt that post-evaluation rejected. A memory recorded several times is visible when any of its
sources is. The condition runs inside the searches (and picks the source a hit is attributed to), so
what an agent may not see never takes a place among the candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Viewer:
    """Who is asking: an agent in a turn of a session; ``all_sessions`` lifts the session scope."""

    agent_id: str
    session_id: str
    turn: int
    all_sessions: bool = False


# On ``sources s`` left-joined with ``winners w`` on the source's session and turn. A winner recorded
# without an attempt (stores made before attempts were kept) counts for every attempt of its turn.
_WINNING_SOURCE = "w.agent_id = s.agent_id AND (w.attempt IS NULL OR w.attempt = s.attempt)"
_IN_SESSION = f"s.session_id = ? AND (s.agent_id = ? OR ({_WINNING_SOURCE} AND s.turn < ?))"
_ANY_SESSION = f"(s.agent_id = ? OR ({_WINNING_SOURCE} AND NOT (s.session_id = ? AND s.turn >= ?)))"
WINNERS_JOIN = "LEFT JOIN {winners} w ON w.session_id = s.session_id AND w.turn = s.turn"


def visible_condition(viewer: Viewer) -> tuple[str, list[Any]]:
    """The SQL condition (on ``s`` and ``w``) for a source ``viewer`` may see, and its parameters."""
    if viewer.all_sessions:
        return _ANY_SESSION, [viewer.agent_id, viewer.session_id, viewer.turn]
    return _IN_SESSION, [viewer.session_id, viewer.agent_id, viewer.turn]

"""Context around a hit: the memories recorded just before and just after the hit's source in its
session ("Did you go?" is answered by the turn after it), the way every index finds them (pure
functions).

A session's records are in the order they were recorded. The neighbours of a hit are the nearest
other memories on each side whose source there the search may see: turn-aware visibility, expiry,
stale marks, domain and task type hold as they hold for hits, while an agent, session or date filter
does not (the hit's session is the one its neighbours come from, whoever said them, on whatever day).
A memory recorded several times next to the hit (the user's question, recorded by each agent) counts
once, at its nearest place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

SPREAD = 4
"""Records read on each side per neighbour wanted: the same memory may sit at several places in a row
(one source per agent that recorded it)."""


def context_scope(scope: SearchFilter) -> SearchFilter:
    """What a hit's neighbours must meet: ``scope`` without its session, agent and date filters."""
    return replace(scope, session_id=None, agent_id=None, since=None, until=None)


def memory_scope(scope: SearchFilter) -> SearchFilter:
    """The conditions of ``scope`` on the memory itself (expiry, stale marks, domain, task type)."""
    return SearchFilter(domain=scope.domain, task_type=scope.task_type, include_stale=scope.include_stale)


def nearest(
    hit: str, before: Iterable[tuple[str, Source]], after: Iterable[tuple[str, Source]], count: int
) -> list[tuple[int, str, Source]]:
    """``(offset, memory id, source)`` of up to ``count`` memories on each side of ``hit``, in session
    order; ``before`` and ``after`` are each side's records, nearest first."""
    taken = {hit}
    sides: list[list[tuple[int, str, Source]]] = []
    for sign, records in ((-1, before), (1, after)):
        side: list[tuple[int, str, Source]] = []
        for memory_id, source in records:
            if len(side) == count:
                break
            if memory_id not in taken:
                taken.add(memory_id)
                side.append((sign * (len(side) + 1), memory_id, source))
        sides.append(side)
    return [*reversed(sides[0]), *sides[1]]

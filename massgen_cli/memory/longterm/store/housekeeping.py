"""Housekeeping: what the store holds, and taking memories out of both the index and the vector store.
The index goes first, so searches stop finding a memory at once; the journal finishes a delete that was
cut short."""

from __future__ import annotations

import contextlib

from massgen_cli.memory.longterm.record.memories import IndexedMemory
from massgen_cli.memory.longterm.store.index.contract import StoreIndex
from massgen_cli.memory.longterm.store.mem0_store import Mem0Store


class Housekeeping:
    """Lists, clears and forgets memories; mem0 is opened only when there is something to delete."""

    def __init__(self, index: StoreIndex, mem0: Mem0Store):
        self.index = index
        self.mem0 = mem0

    def memories(
        self, *, session_id: str | None = None, agent_id: str | None = None, include_stale: bool = False
    ) -> list[IndexedMemory]:
        """The memories the index holds, of one session or agent if asked, stale ones if asked."""
        return self.index.all(session_id=session_id, agent_id=agent_id, include_stale=include_stale)

    def clear(self, *, session_id: str | None = None, sessions: set[str] | None = None) -> int:
        """Delete every memory (or those recorded only in ``session_id``, or only in the ``sessions``),
        stale ones included, from the index and the vector store; returns how many. A clear cut short is
        finished by the next open."""
        within = sessions if sessions is not None else ({session_id} if session_id else None)
        doomed = [
            m.id
            for m in self.index.all(session_id=session_id, include_stale=True)
            if within is None or {s.session_id for s in m.sources} <= within
        ]
        self.forget(doomed)
        return len(doomed)

    def forget(self, memory_ids: list[str]) -> None:
        """Delete memories from the index (searches stop finding them at once), then their vectors."""
        self.index.delete(memory_ids)
        for memory_id in memory_ids:
            with contextlib.suppress(Exception):  # already gone (a delete that was cut short)
                self.mem0.memory.delete(memory_id)
            self.index.finish(memory_id)

"""What the agents' memory tools (``memory_search``, ``memory_save``, ``memory_forget``) ask of long-term
memory: a search with retrieval's visibility, a save written at once as the agent's record of this turn
and attempt, and a stale mark on a memory the agent can see."""

from __future__ import annotations

import asyncio
import functools
from datetime import date

from massgen_cli.memory.longterm.record.dates import date_bound, today
from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import shown_ids
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.runtime.opening import LongTermRun, searches_all_sessions
from massgen_cli.memory.runtime.recall import Recall
from massgen_cli.tool_contract import (
    DATES,
    FoundMemory,
    MemoryQuery,
    NearbyMemory,
    SavedMemory,
    StaleNote,
    ToolError,
)


class AgentMemoryTools:
    """Long-term memory as the memory tools use it (``tool_contract.AgentMemory``)."""

    def __init__(self, run: LongTermRun, recall: Recall):
        self.run = run
        self.recall = recall

    @property
    def session_id(self) -> str:
        return self.run.session_id

    def all_sessions_allowed(self, agent_id: str) -> bool:
        return searches_all_sessions(self.run.settings[agent_id])

    async def search_visible(self, agent_id: str, asked: MemoryQuery) -> list[FoundMemory]:
        """What retrieval would bring ``agent_id`` now (turn-aware, not stale), best first, each with
        the memories recorded around it; ``all_sessions`` only where its config searches every
        session; only memories dated from ``since`` to ``until`` when given (``record.dates.date_bound``:
        relative dates resolved against today)."""
        viewer = self.recall.viewer(
            agent_id, all_sessions=asked.all_sessions and self.all_sessions_allowed(agent_id)
        )
        days = _bound("since", asked.since, end=False), _bound("until", asked.until, end=True)
        search = functools.partial(self.recall.search, since=days[0], until=days[1])
        hits = await asyncio.to_thread(search, agent_id, asked.query, asked.limit, viewer)
        if self.run.traces is not None:  # what it found is in its context now: it learns with the turn
            self.run.traces.found(agent_id, shown_ids(hits))
        return [
            FoundMemory(
                hit.id,
                hit.text,
                hit.score,
                hit.source.agent_id,
                hit.source.session_id,
                hit.source.turn,
                str({**hit.memory.extra, **hit.source.extra}.get("kind") or ""),
                tuple(
                    NearbyMemory(turn.offset, turn.source.agent_id, turn.source.turn, turn.text)
                    for turn in hit.context
                ),
            )
            for hit in hits
        ]

    async def save_memory(self, agent_id: str, text: str, kind: str) -> SavedMemory:
        """``text`` written now, verbatim, as the agent's in this turn and attempt (so the others see it
        once that attempt wins the turn), kept as semantic memory."""
        run = self.run
        assert run.recorder is not None, "memory tools are offered only with an open store"
        context = RecordContext(agent_id, run.session_id, run.at.turn, run.at.attempt, level="semantic")
        message: RecordMessage = {"role": "assistant", "content": text, "metadata": {"kind": kind}}
        outcome = await run.recorder.record_now([message], context, run.dump_dir)
        return SavedMemory(tuple(outcome.added), tuple(outcome.existing))

    async def mark_stale(self, agent_id: str, memory_id: str, reason: str) -> StaleNote | None:
        """Mark a memory ``agent_id`` can see as stale (None: it cannot see it)."""
        run = self.run
        assert run.store is not None, "memory tools are offered only with an open store"
        index, viewer = run.store.index, self.recall.viewer(agent_id)

        def mark() -> StaleNote | None:
            if memory_id not in index.attribute([memory_id], SearchFilter(viewer=viewer)):
                return None
            newly = index.mark_stale(StaleMark(memory_id, reason, agent_id, run.session_id, run.at.turn))
            kept = index.stale_marks([memory_id])[memory_id]
            return StaleNote(kept.marked_by, kept.reason, newly)

        return await asyncio.to_thread(mark)


def _bound(name: str, text: str | None, *, end: bool) -> date | None:
    """The day a ``since`` or ``until`` argument names (None when not given)."""
    if text is None:
        return None
    found = date_bound(text, today(), end=end)
    if found is None:
        raise ToolError(f"argument '{name}' names no date ({text!r}); give {DATES}")
    return found

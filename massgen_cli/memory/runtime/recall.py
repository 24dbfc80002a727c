"""Recall: the ``Relevant memories:`` block of an agent's step, looked up turn-aware. With
``retrieval.exclude_recent`` it is looked up at the first step of an attempt and again after a
compression or an agent restart; otherwise at every step. Retrieval is a help, not a requirement: a
failed lookup is said and the step goes on with what it had."""

from __future__ import annotations

import asyncio
from datetime import date

from massgen_cli.events import LookupReason, MemoryRetrieved, Notice, RetrievedMemory
from massgen_cli.memory.longterm.record.memories import MemoryHit
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import (
    build_query,
    memory_message,
    shown_ids,
    within_budget,
)
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.runtime.opening import LongTermRun, searches_all_sessions, value_goal
from massgen_cli.messages import Message


class Recall:
    """Each agent's retrieved block for the current attempt, looked up again when it is due."""

    def __init__(self, run: LongTermRun):
        self.run = run
        self.blocks: dict[str, Message | None] = {}
        self.reasons: dict[str, LookupReason] = {}

    def begin(self) -> None:
        """A new attempt looks every agent's memories up afresh."""
        self.blocks.clear()
        self.reasons.clear()

    def refresh(self, agent_id: str, reason: LookupReason = "after_restart") -> None:
        """The agent's next step looks long-term memory up again (``reason`` is what its event says)."""
        self.blocks.pop(agent_id, None)
        self.reasons[agent_id] = reason

    def viewer(self, agent_id: str, *, all_sessions: bool | None = None) -> Viewer:
        """What ``agent_id`` may see now (turn-aware); every session where its config searches them all."""
        everywhere = (
            searches_all_sessions(self.run.settings[agent_id]) if all_sessions is None else all_sessions
        )
        return Viewer(agent_id, self.run.session_id, self.run.at.turn, everywhere)

    def search(
        self,
        agent_id: str,
        query: str,
        limit: int,
        viewer: Viewer,
        *,
        since: date | None = None,
        until: date | None = None,
    ) -> list[MemoryHit]:
        """What ``viewer`` may see (dated from ``since`` to ``until``, when given) that best matches
        ``query``, ranked as the agent's config says (learned values mixed in when on), each with the
        memories recorded around it (``retrieval.context_turns``); blocking, so it runs in a thread."""
        assert self.run.store is not None, "searched only with an open store"
        memory = self.run.settings[agent_id]
        learning = memory.value_learning
        return self.run.store.search(
            query,
            limit=limit,
            scope=SearchFilter(viewer=viewer, since=since, until=until),
            value_goal=value_goal(memory),
            value_weight=learning.weight if learning.enabled else 0.0,
            context=memory.retrieval.context_turns,
        )

    async def block(self, agent_id: str, question: str, history: list[Message]) -> Message | None:
        """The ``Relevant memories:`` message for this step (None: nothing found, or memory is off)."""
        if not self.run.enabled_for(agent_id):
            return None
        memory = self.run.settings[agent_id]
        if memory.retrieval.exclude_recent and agent_id in self.blocks:
            return self.blocks[agent_id]
        query = build_query(question, history)
        # Why, as it starts: a restart that comes while it runs is the next lookup's reason, not this one's.
        reason = self.reasons.pop(agent_id, None) or ("step" if agent_id in self.blocks else "turn_start")
        try:
            hits = await asyncio.to_thread(
                self.search, agent_id, query, memory.retrieval.limit, self.viewer(agent_id)
            )
        except Exception as error:  # retrieval is a help, not a requirement
            self.run.failed(f"memory retrieval for {agent_id} failed: {error}", error)
            return self.blocks.get(agent_id)
        chosen = within_budget(hits, memory.retrieval.token_budget)
        if self.run.traces is not None:
            self.run.traces.observe(agent_id, shown_ids(chosen))
        self._said(agent_id, reason, query, chosen)
        block = memory_message(chosen)
        if agent_id not in self.reasons:  # else a refresh came while it looked: the next step looks again
            self.blocks[agent_id] = block
        return block

    def _said(self, agent_id: str, reason: LookupReason, query: str, chosen: list[MemoryHit]) -> None:
        """The ``MemoryRetrieved`` of a lookup, with why it was made; an event that cannot be made is said
        with --debug and the step goes on."""
        try:
            memories = [
                RetrievedMemory(
                    hit.id,
                    hit.text,
                    round(hit.score, 4),
                    hit.source.agent_id,
                    hit.source.session_id,
                    hit.source.turn,
                )
                for hit in chosen
            ]
            event = MemoryRetrieved(agent_id, reason, query, memories)
        except Exception as error:  # the event reports a lookup; it cannot fail the step
            self.run.emit(Notice("debug", f"no MemoryRetrieved event for {agent_id}: {error!r}"))
            return
        self.run.emit(event)

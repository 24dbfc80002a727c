"""The memory of a run: long-term retrieval and recording around each agent step, and the
bookkeeping at the end of a turn. A memory failure is shown and logged; it never ends a turn."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import ClassVar, Literal

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.errors import MassGenError
from massgen_cli.events import MemoryRetrieved, Notice, RetrievedMemory, RunEvent
from massgen_cli.memory.longterm.record.background import MemoryRecorder
from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.record.memories import MemoryHit, RecordContext, RecordMessage
from massgen_cli.memory.longterm.record.rules import messages_to_record
from massgen_cli.memory.longterm.record.spool import Spool, SpoolTarget, WinnerMark, waiting_notice
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import build_query, memory_message, within_budget
from massgen_cli.memory.longterm.retrieve.values import EligibilityTraces
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import store_identity
from massgen_cli.messages import Message
from massgen_cli.tools.memory_tools import FoundMemory, SavedMemory, StaleNote

SPOOL_NAME = "spool.jsonl"
RECALL_WAIT_S = 10.0
"""How long a compression waits for what it dropped to be written, so the next lookup can find it."""

LookupReason = Literal["turn_start", "after_compression", "after_restart", "step"]
"""Why long-term memory is looked up: the attempt's first lookup, what a compression dropped, an agent
restart, or every step (``retrieval.exclude_recent: false``)."""


def persistent_enabled(memory: MemoryConfig | None) -> bool:
    return bool(memory and memory.enabled and memory.persistent_memory.enabled)


def value_goal(memory: MemoryConfig) -> str:
    """The goal learned values belong to: ``value_learning.goal``, else the memory's task type."""
    return memory.value_learning.goal or memory.task_type


def searches_all_sessions(memory: MemoryConfig) -> bool:
    """``session_name: null`` written explicitly means: search every session."""
    persistent = memory.persistent_memory
    return "session_name" in persistent.model_fields_set and persistent.session_name is None


def spool_target(memory: MemoryConfig, state_dir: Path) -> SpoolTarget:
    """The store a memory block's records are meant for, as the spool marks them."""
    store = store_identity(memory.persistent_memory, state_dir)
    return SpoolTarget(store, segment(memory.domain), segment(memory.task_type))


class MemoryRuntime:
    """Long-term memory for the agents of one session; a part of the attempt lifecycle."""

    part_name: ClassVar[str] = "long-term memory"

    def __init__(
        self,
        config: MassGenConfig,
        state_dir: Path | None,
        session_id: str,
        emit: Callable[[RunEvent], None],
    ):
        """``state_dir`` None: the state folder cannot be written, so nothing is stored or kept."""
        self.config = config
        self.session_id = session_id
        self.emit = emit
        self.settings: dict[str, MemoryConfig] = {
            a.id or "": a.memory or config.memory for a in config.agents
        }
        enabled = [agent_id for agent_id, memory in self.settings.items() if persistent_enabled(memory)]
        self.startup_errors: list[str] = []
        self.wanted = bool(enabled or config.orchestrator.shared_memory.persistent)
        kept = state_dir if self.wanted else None
        self.store = self._open_store(kept) if kept else None
        target = spool_target(self._store_settings(), kept) if kept else None
        self.spool = Spool(kept / "memory" / SPOOL_NAME, target, self._failed) if kept and target else None
        self.recorder = MemoryRecorder(self.store, emit, self.spool) if self.store else None
        self.spool_replayed = False
        learning = config.memory.value_learning
        self.traces = EligibilityTraces(learning) if learning.enabled and self.store else None
        self.blocks: dict[str, Message | None] = {}
        self.reasons: dict[str, LookupReason] = {}
        self.dump_dir: Path | None = None
        self.turn = 0
        self.attempt = 1

    def _open_store(self, state_dir: Path) -> PersistentMemory | None:
        """The process's store, opened now so a problem (another process's lock, a server that is
        down) shows before the first turn; the run goes on without long-term memory then."""
        memory = self._store_settings()
        try:
            store = PersistentMemory(
                memory.persistent_memory,
                state_dir,
                domain=memory.domain,
                task_type=memory.task_type,
                lifecycle=memory.lifecycle,
            )
            store.mem0  # noqa: B018 (builds mem0 and opens the vector store)
        except (MassGenError, OSError) as error:  # a known problem: a lock, a server, the disk, damage
            self._off(f"long-term memory is off for this run: {error}", state_dir)
            return None
        except Exception as error:  # a bug: said as one, but the run still goes on without the store
            self.emit(Notice("debug", traceback.format_exc()))
            self._off(
                f"long-term memory is off for this run because of an unexpected {type(error).__name__}: "
                f"{error} (a bug; please report it, --debug shows where)",
                state_dir,
            )
            return None
        plan = f"memory: LLM {store.llm_plan.reason}; embedder {store.embedder_plan.name}"
        self.emit(Notice("debug", plan))
        return store

    def _store_settings(self) -> MemoryConfig:
        """The memory block the process's store is opened with: the global one when it turns long-term
        memory on, else the first agent's that does."""
        enabled = [agent_id for agent_id, memory in self.settings.items() if persistent_enabled(memory)]
        if persistent_enabled(self.config.memory) or not enabled:
            return self.config.memory
        return self.settings[enabled[0]]

    def _off(self, reason: str, state_dir: Path) -> None:
        """Said once, with where this run's records wait meanwhile."""
        spool = state_dir / "memory" / SPOOL_NAME
        message = (
            f"{reason.rstrip('. ')}. This run's memory records are kept in {spool} and written by the "
            "first run that opens the store again"
        )
        self.startup_errors.append(message)
        self.emit(Notice("degraded", message))

    def enabled_for(self, agent_id: str) -> bool:
        return self.store is not None and persistent_enabled(self.settings.get(agent_id))

    def tools_for(self, agent_id: str) -> bool:
        """Whether the agent is given the memory tools: long-term memory on for it, and ``memory.tools``."""
        return self.enabled_for(agent_id) and self.settings[agent_id].tools

    def begin(self, at: AttemptAt) -> None:
        if not self.spool_replayed:  # the first attempt of the run, inside the event loop
            self.spool_replayed = True
            self._replay_spool()
        self.turn, self.attempt = at.turn, at.attempt
        self.dump_dir = at.log_dir / "memory_debug" if at.log_dir else None
        self.blocks.clear()
        self.reasons.clear()

    def refresh(self, agent_id: str, reason: LookupReason = "after_restart") -> None:
        """The agent's next step looks long-term memory up again: after an agent restart, or after a
        compression dropped messages (``reason``, which its ``MemoryRetrieved`` says)."""
        self.blocks.pop(agent_id, None)
        self.reasons[agent_id] = reason

    async def retrieved_block(self, agent_id: str, question: str, history: list[Message]) -> Message | None:
        """The ``Relevant memories:`` message for this step. With ``exclude_recent`` it is looked up at
        the first step of an attempt and again after a compression or a ``refresh``, else every step."""
        if not self.enabled_for(agent_id):
            return None
        memory = self.settings[agent_id]
        if memory.retrieval.exclude_recent and agent_id in self.blocks:
            return self.blocks[agent_id]
        viewer = Viewer(agent_id, self.session_id, self.turn, searches_all_sessions(memory))
        query = build_query(question, history)
        try:
            hits = await asyncio.to_thread(self._search, agent_id, query, memory.retrieval.limit, viewer)
        except Exception as error:  # retrieval is a help, not a requirement
            self._failed(f"memory retrieval for {agent_id} failed: {error}")
            return self.blocks.get(agent_id)
        chosen = within_budget(hits, memory.retrieval.token_budget)
        if self.traces is not None:
            self.traces.observe(agent_id, [hit.id for hit in chosen])
        self._said_retrieved(agent_id, query, chosen)
        self.blocks[agent_id] = memory_message(chosen)
        return self.blocks[agent_id]

    def _said_retrieved(self, agent_id: str, query: str, chosen: list[MemoryHit]) -> None:
        """The ``MemoryRetrieved`` of a lookup, with why it was made; an event that cannot be made is said
        with --debug and the step goes on."""
        reason = self.reasons.pop(agent_id, None) or ("step" if agent_id in self.blocks else "turn_start")
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
            self.emit(Notice("debug", f"no MemoryRetrieved event for {agent_id}: {error!r}"))
            return
        self.emit(event)

    def records_for(self, agent_id: str) -> bool:
        """Whether ``record`` keeps anything of ``agent_id`` (its long-term memory is on)."""
        return persistent_enabled(self.settings.get(agent_id))

    def record(
        self,
        agent_id: str,
        messages: list[Message],
        *,
        reasoning: str = "",
        records: Sequence[RecordMessage] = (),
    ) -> None:
        """Queue what the recording rules keep of ``messages`` (and the model's ``reasoning``), then
        ``records`` as they are (memory files, with their metadata); while the store is off, keep it in
        the spool for a later run."""
        memory = self.settings.get(agent_id)
        if memory is None or not persistent_enabled(memory):
            return
        selected = [*messages_to_record(messages, memory.recording, reasoning=reasoning), *records]
        context = RecordContext(agent_id, self.session_id, self.turn, self.attempt)
        if self.recorder is not None:
            self.recorder.submit(selected, context, self.dump_dir)
        elif selected and self.spool is not None:
            self.spool.keep(selected, context)

    def _search(self, agent_id: str, query: str, limit: int, viewer: Viewer) -> list[MemoryHit]:
        """What ``viewer`` may see that best matches ``query``, ranked as the agent's config says
        (learned values mixed in when on); blocking, so it runs in a thread."""
        assert self.store is not None, "searched only with an open store"
        memory = self.settings[agent_id]
        learning = memory.value_learning
        return self.store.search(
            query,
            limit=limit,
            scope=SearchFilter(viewer=viewer),
            value_goal=value_goal(memory),
            value_weight=learning.weight if learning.enabled else 0.0,
        )

    def all_sessions_allowed(self, agent_id: str) -> bool:
        return searches_all_sessions(self.settings[agent_id])

    async def search_visible(
        self, agent_id: str, query: str, limit: int, *, all_sessions: bool
    ) -> list[FoundMemory]:
        """``memory_search``: what retrieval would bring ``agent_id`` now (turn-aware, not stale), best
        first; ``all_sessions`` only where its config searches every session."""
        everywhere = all_sessions and self.all_sessions_allowed(agent_id)
        viewer = Viewer(agent_id, self.session_id, self.turn, everywhere)
        hits = await asyncio.to_thread(self._search, agent_id, query, limit, viewer)
        return [
            FoundMemory(
                hit.id,
                hit.text,
                hit.score,
                hit.source.agent_id,
                hit.source.session_id,
                hit.source.turn,
                str({**hit.memory.extra, **hit.source.extra}.get("kind") or ""),
            )
            for hit in hits
        ]

    async def save_memory(self, agent_id: str, text: str, kind: str) -> SavedMemory:
        """``memory_save``: ``text`` written now, verbatim, as the agent's in this turn and attempt (so
        the others see it once that attempt wins the turn), kept as semantic memory."""
        assert self.recorder is not None, "memory tools are offered only with an open store"
        context = RecordContext(agent_id, self.session_id, self.turn, self.attempt, level="semantic")
        message: RecordMessage = {"role": "assistant", "content": text, "metadata": {"kind": kind}}
        outcome = await self.recorder.record_now([message], context, self.dump_dir)
        return SavedMemory(tuple(outcome.added), tuple(outcome.existing))

    async def mark_stale(self, agent_id: str, memory_id: str, reason: str) -> StaleNote | None:
        """``memory_forget``: mark a memory ``agent_id`` can see as stale (None: it cannot see it)."""
        assert self.store is not None, "memory tools are offered only with an open store"
        index = self.store.index
        viewer = Viewer(agent_id, self.session_id, self.turn, searches_all_sessions(self.settings[agent_id]))

        def mark() -> StaleNote | None:
            if memory_id not in index.attribute([memory_id], SearchFilter(viewer=viewer)):
                return None
            newly = index.mark_stale(memory_id, reason, agent_id, session_id=self.session_id, turn=self.turn)
            kept = index.stale_marks([memory_id])[memory_id]
            return StaleNote(kept.marked_by, kept.reason, newly)

        return await asyncio.to_thread(mark)

    def _replay_spool(self) -> None:
        """Records an earlier run could not write are written now (in the background, like any); while
        the store is off they stay in the spool."""
        if self.recorder is None or self.store is None or self.spool is None:
            return
        try:
            kept = self.spool.take()
        except OSError as error:  # the spool is left as it is, for a later run
            self._failed(f"could not read the memory spool {self.spool.path} ({error}); it is left as it is")
            return
        if kept.set_aside:
            self._failed(
                f"{kept.set_aside} damaged line(s) of the memory spool {self.spool.path} could not be read "
                f"and were set aside in {self.spool.damaged_path}; the {len(kept)} readable one(s) were kept "
                "and are written now. Look at or delete that file; nothing reads it again"
            )
        if kept:
            self.emit(Notice("info", f"writing {len(kept)} memory record(s) kept from an earlier run"))
        for target, count in kept.waiting.items():
            self.emit(Notice("info", waiting_notice(count, target, self.spool.path)))
        for messages, context in kept.records:
            self.recorder.submit(messages, context, None)
        for mark in kept.winners:
            try:
                self.store.record_winner(mark.session_id, mark.turn, mark.agent_id, mark.attempt)
            except Exception as error:
                self.spool.keep_winner(mark)
                self._failed(f"could not record the winner of turn {mark.turn}, kept again: {error}")

    def dropped_listener(self, agent_id: str) -> Callable[[list[Message]], Awaitable[None]]:
        """Messages compression drops go to long-term memory, so retrieval can bring them back."""

        async def on_dropped(messages: list[Message]) -> None:
            self.record(agent_id, messages)
            if self.recorder is not None:  # written before the next lookup, so it can find them
                await self.recorder.settled(RECALL_WAIT_S)
            self.refresh(agent_id, "after_compression")

        return on_dropped

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """Record the winner's final answer and the winner itself, learn values from the outcome,
        flush, and return the errors of the turn."""
        winner, final_answer = outcome.winner, outcome.final_answer
        startup, self.startup_errors = self.startup_errors, []
        if self.store is None or self.recorder is None:
            if winner is not None and final_answer and self.spool is not None:  # for a run that can write
                self.record(winner, [{"role": "assistant", "content": final_answer}])
                self.spool.keep_winner(WinnerMark(self.session_id, self.turn, winner, self.attempt))
            return startup
        if winner is not None and final_answer:
            await self._learn(winner, [agent_id for agent_id in outcome.answers if agent_id != winner])
        self._forget_traces()
        if winner is not None and final_answer:
            self.record(winner, [{"role": "assistant", "content": final_answer}])
            try:
                await asyncio.to_thread(
                    self.store.record_winner, self.session_id, self.turn, winner, self.attempt
                )
            except Exception as error:
                if self.spool is not None:
                    self.spool.keep_winner(WinnerMark(self.session_id, self.turn, winner, self.attempt))
                self._failed(f"could not record the winner of turn {self.turn} (kept for later): {error}")
        return startup + await self.recorder.flush()

    async def _learn(self, winner: str, rejected: list[str]) -> None:
        if self.traces is None or self.store is None:
            return
        learning = self.config.memory.value_learning
        updates = self.traces.outcome(winner, rejected)
        try:
            changed = await asyncio.to_thread(
                self.store.apply_value_updates, updates, value_goal(self.config.memory), learning.alpha
            )
        except Exception as error:
            self._failed(f"could not update memory values: {error}")
            return
        if changed:
            self.emit(Notice("debug", f"📈 updated the values of {len(changed)} memories (winner {winner})"))

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """What an attempt recorded stays, invisible to the others until its agent wins a turn; a failed
        or cancelled turn leaves no value traces behind."""
        if whole_turn:
            self._forget_traces()

    def _forget_traces(self) -> None:
        if self.traces is not None:
            self.traces.clear()

    def _failed(self, message: str) -> None:
        if self.recorder is not None:
            self.recorder.errors.append(message)
        self.emit(Notice("warning", message))

    async def close(self) -> None:
        if self.recorder is not None:
            await self.recorder.close()
        if self.store is not None:
            self.store.close()

"""The orchestrator's shared memory for a session: the block before every agent step, what agents'
answers and votes leave in it, and its part in the attempt lifecycle (what an attempt adds is rolled back
with a rejected attempt or a failed turn; a turn with an answer leaves the orchestrator's entries).

Any of its stores may be configured: the shared conversation, shared persistent memory (long-term,
turn-aware) and scoped entries with session slots. With none, requests are unchanged. A failure is
reported and the step goes on without the block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.config.orchestrator import SharedMemoryConfig
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.events import Notice, RunEvent
from massgen_cli.memory.context.conversation import ConversationMemory
from massgen_cli.memory.longterm.record.background import MemoryRecorder
from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage
from massgen_cli.memory.longterm.record.spool import Spool
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import attribution_line
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.shared.block import (
    CONVERSATION_HEADER,
    ENTRIES_HEADER,
    PERSISTENT_HEADER,
    SLOTS_HEADER,
    SessionFacts,
    conversation_lines,
    entry_lines,
    fit_block,
    slot_lines,
)
from massgen_cli.memory.shared.entries import SharedEntries
from massgen_cli.messages import Message
from massgen_cli.session import Session
from massgen_cli.state import read_json, write_json

CONVERSATION_FILE = "shared_conversation.json"
ORCHESTRATOR = "orchestrator"


def _ignore(event: RunEvent) -> None:
    """The event sink of a shared memory nobody watches."""


@dataclass
class SharedStores:
    """What shared memory is made of (any part may be None); ``conversation_path`` is where the shared
    conversation is saved (None: it is kept in memory only)."""

    conversation: ConversationMemory | None = None
    persistent: PersistentMemory | None = None
    entries: SharedEntries | None = None
    conversation_path: Path | None = None


@dataclass(frozen=True)
class RecordingLink:
    """How shared records reach long-term memory: the background recorder (which leaves debug dumps in
    ``dump_dir``), and the spool that keeps them while the store is off."""

    recorder: MemoryRecorder | None = None
    spool: Spool | None = None
    dump_dir: Path | None = None


class SharedMemory:
    """The orchestrator's shared memory: any of conversation, persistent and entries, or none."""

    part_name: ClassVar[str] = "shared memory"

    def __init__(
        self,
        settings: SharedMemoryConfig,
        stores: SharedStores | None = None,
        *,
        session_id: str = "",
        emit: Callable[[RunEvent], None] = _ignore,
        link: RecordingLink | None = None,
        facts: Callable[[], SessionFacts] = SessionFacts,
    ):
        self.settings = settings
        self.stores = stores or SharedStores()
        self.session_id = session_id
        self.emit = emit
        self.link = link or RecordingLink()
        self.read_facts = facts
        self.facts = facts()
        self.errors: list[str] = []
        self.marks: dict[tuple[int, int], int] = {}
        self._cache: dict[str, tuple[Any, Message | None]] = {}

    @property
    def conversation(self) -> ConversationMemory | None:
        return self.stores.conversation

    @property
    def persistent(self) -> PersistentMemory | None:
        return self.stores.persistent

    @property
    def entries(self) -> SharedEntries | None:
        return self.stores.entries

    @property
    def configured(self) -> bool:
        return any(part is not None for part in (self.conversation, self.persistent, self.entries))

    async def block(self, agent_id: str, turn: int, question: str) -> Message | None:
        """The shared block for ``agent_id``'s step, or None (nothing configured, or nothing to show);
        cached while nothing it shows has changed."""
        if not self.configured:
            return None
        state = (
            self.conversation.size() if self.conversation else 0,
            self.entries.version if self.entries else 0,
            turn,
            question,
            self.facts.active_agent,
        )
        cached = self._cache.get(agent_id)
        if cached is not None and cached[0] == state:
            return cached[1]
        try:
            sections = await self._sections(agent_id, turn, question)
        except Exception as error:  # the agent still gets its task
            self._failed(f"shared memory for {agent_id} failed: {error}")
            return None
        message = fit_block(sections, self.settings.token_budget)
        self._cache[agent_id] = (state, message)
        return message

    async def _sections(self, agent_id: str, turn: int, question: str) -> list[tuple[str, list[str]]]:
        sections: list[tuple[str, list[str]]] = []
        if self.conversation is not None:
            sections.append(
                (CONVERSATION_HEADER, conversation_lines(self.conversation, self.settings.window, question))
            )
        if self.persistent is not None:
            hits = await asyncio.to_thread(
                self.persistent.search,
                question,
                limit=self.settings.window,
                scope=SearchFilter(viewer=Viewer(agent_id, self.session_id, turn)),
            )
            sections.append((PERSISTENT_HEADER, [attribution_line(hit) for hit in hits]))
        if self.entries is not None:
            sections.append((ENTRIES_HEADER, entry_lines(self.entries, turn)))
            sections.append((SLOTS_HEADER, slot_lines(self.entries, turn, self.facts)))
        return sections

    async def record(self, agent_id: str, content: str, turn: int, attempt: int) -> None:
        """After a vote or a new answer: into shared conversation memory and shared persistent memory
        (through the background recorder when there is one)."""
        message: RecordMessage = {"role": "assistant", "content": content}
        if self.conversation is not None:
            await self.conversation.add({"role": "assistant", "content": content}, agent_id=agent_id)
        context = RecordContext(agent_id, self.session_id, turn, attempt, level="working")
        link = self.link
        if self.persistent is None and self.settings.persistent and link.spool is not None:
            link.spool.keep([message], context)  # the store is off: kept for a run that can write it
        if self.persistent is None:
            return
        if link.recorder is not None:  # in the background, with a debug dump, like every recording
            link.recorder.submit([message], context, link.dump_dir)
            return
        try:
            await asyncio.to_thread(self.persistent.record, [message], context)
        except NotImplementedError:
            pass  # a store that only reads is allowed
        except Exception as error:
            self._failed(f"shared persistent memory could not record {agent_id}'s message: {error}")

    def _failed(self, message: str) -> None:
        self.errors.append(message)
        self.emit(Notice("warning", message))

    def take_errors(self) -> list[str]:
        errors, self.errors = self.errors, []
        return errors

    def begin(self, at: AttemptAt) -> None:
        """Remember where the shared conversation stands, to roll it back with the attempt or turn."""
        self.marks[(at.turn, at.attempt)] = self.conversation.size() if self.conversation is not None else 0
        self.link = replace(self.link, dump_dir=at.log_dir / "memory_debug" if at.log_dir else None)
        self.facts = self.read_facts()
        self._cache.clear()

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """A turn with an answer leaves the orchestrator's entries; one without is rolled back. Returns
        the memory failures of the turn."""
        at = outcome.at
        if not outcome.answered:
            self.roll_back(at, whole_turn=True)
            return self.take_errors()
        if self.entries is not None:
            winning = f"{outcome.winner}: {outcome.final_answer}"
            self.entries.add("winning_answer", winning, "conversation", ORCHESTRATOR, at.turn, at.attempt)
            votes = outcome.votes_line() or "no votes"
            self.entries.add("vote_result", votes, "conversation", ORCHESTRATOR, at.turn, at.attempt)
        self.save()
        return self.take_errors()

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        if self.entries is not None:
            self.entries.roll_back(at.turn, None if whole_turn else at.attempt)
        mark = self.marks.get((at.turn, 1 if whole_turn else at.attempt))
        if self.conversation is not None and mark is not None:
            self.conversation.truncate(mark)
        if whole_turn:
            self.save()

    def save(self) -> None:
        if self.entries is not None:
            self.entries.save()
        path = self.stores.conversation_path
        if self.conversation is not None and path is not None:
            write_json(path, self.conversation.to_list())


def session_facts(session: Session) -> SessionFacts:
    """Who won the session's last turn, and every agent that has won one."""
    winners = [exchange.winner for exchange in session.history() if exchange.winner]
    return SessionFacts(winners[-1] if winners else None, list(dict.fromkeys(winners)))


@dataclass(frozen=True)
class SharedMemoryPlace:
    """Where a session's shared memory lives and what it records to."""

    session: Session
    store: PersistentMemory | None = None
    link: RecordingLink = field(default_factory=RecordingLink)
    saved: bool = True


def open_shared_memory(
    config: MassGenConfig, place: SharedMemoryPlace, emit: Callable[[RunEvent], None]
) -> SharedMemory:
    """The session's shared memory as configured, with what was saved of it (nothing is saved when the
    state folder cannot be written)."""
    settings, session = config.orchestrator.shared_memory, place.session
    stores = SharedStores()
    if settings.conversation:
        path = session.directory / CONVERSATION_FILE
        stores.conversation = _load_conversation(path)
        stores.conversation_path = path if place.saved else None
    if settings.persistent:
        stores.persistent = place.store
    if settings.entries:
        stores.entries = SharedEntries.load(session.directory, config.memory.lifecycle, saved=place.saved)
    return SharedMemory(
        settings,
        stores,
        session_id=session.id,
        emit=emit,
        link=place.link,
        facts=lambda: session_facts(session),
    )


def _load_conversation(path: Path) -> ConversationMemory:
    if not path.is_file():
        return ConversationMemory()
    return ConversationMemory.from_list(read_json(path, "shared conversation"))

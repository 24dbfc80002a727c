"""The shared memory block the orchestrator puts before every agent step.

One system message, right after the first system message, with the sections that are configured:
``=== SHARED CONVERSATION MEMORY ===`` (answers and votes as ``[agent_id]: content``, chosen by
recency and by relevance to the question, within ``window``), ``=== SHARED PERSISTENT MEMORY ===``
(long-term knowledge, turn-aware), the scoped entries in effect and the session slots. The block is
capped at ``token_budget`` tokens and cached while nothing it shows has changed. A failure is
reported and the step goes on without the block.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen_cli.config.orchestrator import SharedMemoryConfig
from massgen_cli.events import Notice, RunEvent
from massgen_cli.memory.context.conversation import ConversationMemory, StoredMessage
from massgen_cli.memory.longterm.record.background import MemoryRecorder
from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage
from massgen_cli.memory.longterm.record.spool import Spool
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import attribution_line
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.shared.entries import SharedEntries
from massgen_cli.messages import Message, is_system_block
from massgen_cli.tokens import count_text_tokens

CONVERSATION_HEADER = "=== SHARED CONVERSATION MEMORY ==="
PERSISTENT_HEADER = "=== SHARED PERSISTENT MEMORY ==="
ENTRIES_HEADER = "=== SHARED ENTRIES ==="
SLOTS_HEADER = "=== SESSION SLOTS ==="
_WORD = re.compile(r"\w+")


def select_entries(items: Sequence[StoredMessage], window: int, query: str) -> list[StoredMessage]:
    """Up to ``window`` items: the newest half by recency, the rest the older ones most like ``query``,
    in their original order."""
    if len(items) <= window:
        return list(items)
    recent_count = math.ceil(window / 2)
    older, recent = list(items[:-recent_count]), list(items[-recent_count:])
    words = set(_WORD.findall(query.lower()))
    overlap = sorted(
        range(len(older)),
        key=lambda i: (
            -len(words & set(_WORD.findall(str(older[i].message.get("content", "")).lower()))),
            -i,
        ),
    )
    chosen = sorted(overlap[: window - recent_count])
    return [older[i] for i in chosen] + recent


@dataclass
class SessionFacts:
    """What the slots section says besides the slots: the active agent (last winner) and who has won."""

    active_agent: str | None = None
    visited_agents: list[str] = field(default_factory=list)


class SharedMemory:
    """The orchestrator's shared memory: any of conversation, persistent and entries, or none."""

    def __init__(
        self,
        settings: SharedMemoryConfig,
        *,
        conversation: ConversationMemory | None = None,
        persistent: PersistentMemory | None = None,
        entries: SharedEntries | None = None,
        session_id: str = "",
        emit: Callable[[RunEvent], None] = lambda event: None,
        recorder: MemoryRecorder | None = None,
        dump_dir: Path | None = None,
        spool: Spool | None = None,
    ):
        self.settings = settings
        self.conversation = conversation
        self.persistent = persistent
        self.entries = entries
        self.session_id = session_id
        self.emit = emit
        self.errors: list[str] = []
        self.recorder, self.dump_dir, self.spool = recorder, dump_dir, spool
        self.facts = SessionFacts()
        self._cache: dict[str, tuple[Any, Message | None]] = {}

    @property
    def configured(self) -> bool:
        return any(part is not None for part in (self.conversation, self.persistent, self.entries))

    async def block(self, agent_id: str, turn: int, question: str) -> Message | None:
        """The shared block for ``agent_id``'s step, or None (nothing configured, or nothing to show)."""
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
        message = self._message(sections)
        self._cache[agent_id] = (state, message)
        return message

    async def _sections(self, agent_id: str, turn: int, question: str) -> list[tuple[str, list[str]]]:
        sections: list[tuple[str, list[str]]] = []
        if self.conversation is not None:
            chosen = select_entries(self.conversation.items, self.settings.window, question)
            lines = [f"[{item.agent_id}]: {item.message.get('content', '')}" for item in chosen]
            sections.append((CONVERSATION_HEADER, lines))
        if self.persistent is not None:
            viewer = Viewer(agent_id, self.session_id, turn)
            hits = await asyncio.to_thread(
                self.persistent.search,
                question,
                limit=self.settings.window,
                scope=SearchFilter(viewer=viewer),
            )
            sections.append((PERSISTENT_HEADER, [attribution_line(hit) for hit in hits]))
        if self.entries is not None:
            effect = self.entries.in_effect(turn)
            lines = [f"[{e.agent_id}] {e.type} ({e.scope}): {e.content}" for e in effect if not e.is_slot]
            sections.append((ENTRIES_HEADER, lines))
            sections.append((SLOTS_HEADER, self._slot_lines(turn)))
        return [(header, lines) for header, lines in sections if lines]

    def _slot_lines(self, turn: int) -> list[str]:
        assert self.entries is not None
        lines = [f"{name}: {value}" for name, value in self.entries.slots(turn).items()]
        if self.facts.active_agent:
            lines.append(f"active agent: {self.facts.active_agent} (last winner)")
        if self.facts.visited_agents:
            lines.append(f"visited agents: {', '.join(self.facts.visited_agents)}")
        return lines

    def _message(self, sections: list[tuple[str, list[str]]]) -> Message | None:
        """The sections as one message within the token budget (oldest lines dropped first)."""
        while sections:
            text = "\n".join(line for header, lines in sections for line in (header, *lines))
            if count_text_tokens(text) <= self.settings.token_budget:
                return {"role": "system", "content": text}
            longest = max(range(len(sections)), key=lambda i: len(sections[i][1]))
            header, lines = sections[longest]
            sections[longest] = (header, lines[1:])
            sections = [(h, ls) for h, ls in sections if ls]
        return None

    async def record(self, agent_id: str, content: str, turn: int, attempt: int) -> None:
        """After a vote or a new answer: into shared conversation memory and shared persistent memory
        (through the background recorder when there is one)."""
        message: RecordMessage = {"role": "assistant", "content": content}
        if self.conversation is not None:
            await self.conversation.add({"role": "assistant", "content": content}, agent_id=agent_id)
        context = RecordContext(agent_id, self.session_id, turn, attempt, level="working")
        if self.persistent is None and self.settings.persistent and self.spool is not None:
            self.spool.keep([message], context)  # the store is off: kept for a run that can write it
        if self.persistent is not None:
            if self.recorder is not None:  # in the background, with a debug dump, like every recording
                self.recorder.submit([message], context, self.dump_dir)
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


def is_shared_block(message: Message) -> bool:
    return is_system_block(message, CONVERSATION_HEADER, PERSISTENT_HEADER, ENTRIES_HEADER, SLOTS_HEADER)

"""What a layer below the tools shares with them, so it never imports ``tools/``: the error a tool
raises for the model to read (``ToolError``, with the shell command it concerned), and the memory
tools' contract with long-term memory (``AgentMemory``, which ``memory.runtime.agent_tools`` implements
and ``tools.memory_tools`` calls, and the values they pass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from massgen_cli.events import CommandEnd

DATES = "a date (2023-05-08), a month (May 2023), a year, or yesterday, last week, last month..."
"""What ``since`` and ``until`` of a memory search may name."""


@dataclass(frozen=True)
class CommandOutcome:
    """What became of a shell command a tool was given: the command line, how it ended, its exit code."""

    command: str
    end: CommandEnd
    exit_code: int | None = None


class ToolError(Exception):
    """A refused or failed tool call; its message goes back to the model as the result (``command``: the
    shell command it refused or that failed)."""

    def __init__(self, message: str, command: CommandOutcome | None = None):
        super().__init__(message)
        self.command = command


@dataclass(frozen=True)
class MemoryQuery:
    """What one ``memory_search`` asks: the most ``limit`` memories matching ``query``, in this session
    or ``all_sessions``, dated from ``since`` to ``until`` when given (see ``DATES``)."""

    query: str
    limit: int
    all_sessions: bool = False
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True)
class NearbyMemory:
    """A memory recorded next to a found one in its session: ``offset`` places before (negative) or
    after it."""

    offset: int
    agent_id: str
    turn: int
    text: str


@dataclass(frozen=True)
class FoundMemory:
    """A memory a search found, shown as the source that makes it visible to the agent, with the
    memories recorded around it (``nearby``)."""

    id: str
    text: str
    score: float
    agent_id: str
    session_id: str
    turn: int
    kind: str = ""
    nearby: tuple[NearbyMemory, ...] = ()


@dataclass(frozen=True)
class SavedMemory:
    """What a save stored: new memories, and memories the same text already was (now also the agent's)."""

    added: tuple[str, ...]
    existing: tuple[str, ...]


@dataclass(frozen=True)
class StaleNote:
    """The stale mark a memory carries after ``memory_forget`` (``newly`` False: it was marked before)."""

    marked_by: str
    reason: str
    newly: bool


class AgentMemory(Protocol):
    """Long-term memory as the memory tools use it, for the agent named in each call
    (``memory.runtime.agent_tools``)."""

    @property
    def session_id(self) -> str: ...

    def all_sessions_allowed(self, agent_id: str) -> bool: ...

    async def search_visible(self, agent_id: str, asked: MemoryQuery) -> list[FoundMemory]:
        """Raises ``ToolError`` when ``since`` or ``until`` names no date."""

    async def save_memory(self, agent_id: str, text: str, kind: str) -> SavedMemory: ...

    async def mark_stale(self, agent_id: str, memory_id: str, reason: str) -> StaleNote | None: ...

"""Memories as data: a memory as the index keeps it (with its sources), what a recording carries, what a
search returns, and how text is prepared for the store (date, turn and speaker in what is indexed, long
text in chunks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Required, TypedDict

CHUNK_WORDS = 200
CHUNK_OVERLAP = 20


@dataclass(frozen=True)
class Source:
    """Who recorded a memory, and when in the session."""

    agent_id: str
    session_id: str
    turn: int
    attempt: int


@dataclass(frozen=True)
class IndexedMemory:
    """A memory as the index keeps it: its key, its text and fields, and every source that recorded it."""

    id: str
    key: str
    text: str
    domain: str
    task_type: str
    role: str
    created_at: str
    expires_at: float | None
    extra: dict[str, Any]
    sources: tuple[Source, ...]

    @property
    def first(self) -> Source:
        return self.sources[0]


class RecordMessage(TypedDict, total=False):
    """What long-term memory stores of one message: its role and text; an imported record's own fields
    (a speaker, a timestamp, ...) travel as ``metadata``."""

    role: Required[str]
    content: Required[str]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class RecordContext:
    """Who records, and where in the session."""

    agent_id: str
    session_id: str
    turn: int
    attempt: int = 1
    level: str = "episodic"

    @property
    def source(self) -> Source:
        return Source(self.agent_id, self.session_id, self.turn, self.attempt)


@dataclass
class RecordOutcome:
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    facts: int = 0
    verbatim: bool = True
    note: str = ""


@dataclass(frozen=True)
class MemoryHit:
    """A retrieved memory, attributed to the source that makes it visible."""

    id: str
    text: str
    score: float
    memory: IndexedMemory
    source: Source

    def to_json(self) -> dict[str, Any]:
        sources = [vars(s) for s in self.memory.sources]
        metadata = {
            "agent_id": self.source.agent_id,
            "session_id": self.source.session_id,
            "turn": self.source.turn,
            "attempt": self.source.attempt,
            "role": self.memory.role,
            "key": self.memory.key,
            "domain": self.memory.domain,
            "task_type": self.memory.task_type,
            "sources": sources,
            **self.memory.extra,
        }
        return {"id": self.id, "text": self.text, "score": round(self.score, 4), "metadata": metadata}


def contextual_text(text: str, role: str, context: RecordContext, extra: dict[str, Any] | None = None) -> str:
    """What is embedded and indexed for a memory: ``<date> · turn <N> · <speaker>: <text>``.

    The date is an imported record's ``timestamp`` (as written there), else the day it is recorded; the
    speaker an imported ``speaker``, else ``user`` for the user's words and the agent id for an agent's.
    Users are shown the text alone."""
    extra = extra or {}
    date = str(extra.get("timestamp") or datetime.now(UTC).date().isoformat())
    speaker = str(extra.get("speaker") or ("user" if role == "user" else context.agent_id))
    return f"{date} · turn {context.turn} · {speaker}: {text}"


def chunk_text(text: str, words: int = CHUNK_WORDS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """Long text in overlapping word windows; short text as is."""
    tokens = text.split()
    if len(tokens) <= words:
        return [text.strip()] if text.strip() else []
    step = words - overlap
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens) - overlap, step)]

"""Memories as data: a memory as the index keeps it (with its sources), what a recording carries, what a
search returns, and how text is prepared for the store (date and speaker in what is indexed, long text
in chunks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Required, TypedDict

CHUNK_WORDS = 200
CHUNK_OVERLAP = 20


@dataclass(frozen=True)
class Source:
    """Who recorded a memory, and when in the session; ``extra`` holds what that record itself said
    of its origin (an imported turn's speaker, timestamp, dialogue id...), which belongs to this source
    alone when the same text came from several."""

    agent_id: str
    session_id: str
    turn: int
    attempt: int
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        found = {k: v for k, v in vars(self).items() if k != "extra"}
        return {**found, **({"extra": self.extra} if self.extra else {})}


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

    def source(self, extra: dict[str, Any] | None = None) -> Source:
        return Source(self.agent_id, self.session_id, self.turn, self.attempt, dict(extra or {}))


@dataclass
class RecordOutcome:
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    facts: int = 0
    verbatim: bool = True
    note: str = ""


@dataclass(frozen=True)
class ContextTurn:
    """A memory recorded next to a hit in the hit's session: ``offset`` places before it (negative) or
    after it (positive), shown as the source recorded there."""

    offset: int
    id: str
    text: str
    source: Source

    def to_json(self) -> dict[str, Any]:
        where = {"agent_id": self.source.agent_id, "turn": self.source.turn}
        return {"offset": self.offset, "id": self.id, "text": self.text, **self.source.extra, **where}


@dataclass(frozen=True)
class MemoryHit:
    """A retrieved memory, attributed to the source that makes it visible, with the memories recorded
    around that source in its session when the search asked for them (``context``)."""

    id: str
    text: str
    score: float
    memory: IndexedMemory
    source: Source
    context: tuple[ContextTurn, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The hit as ``memory search --json`` prints it: the attributes are those of the source it is
        shown as (its own speaker, date, import fields), never another source's."""
        sources = [s.to_json() for s in self.memory.sources]
        metadata = {
            **self.source.extra,
            "agent_id": self.source.agent_id,
            "session_id": self.source.session_id,
            "turn": self.source.turn,
            "attempt": self.source.attempt,
            "role": self.memory.role,
            "key": self.memory.key,
            "domain": self.memory.domain,
            "task_type": self.memory.task_type,
            "sources": sources,
        }
        found = {"id": self.id, "text": self.text, "score": round(self.score, 4), "metadata": metadata}
        if self.context:
            found["context"] = [turn.to_json() for turn in self.context]
        return found


def speaker_of(role: str, agent_id: str, extra: dict[str, Any] | None = None) -> str:
    """Who said it: an imported record's ``speaker``, else ``user`` for the user's words and the agent
    id for an agent's."""
    return str((extra or {}).get("speaker") or ("user" if role == "user" else agent_id))


def date_of(extra: dict[str, Any] | None = None) -> str:
    """When: an imported record's ``timestamp`` (as written there), else the day it is recorded."""
    return str((extra or {}).get("timestamp") or datetime.now(UTC).date().isoformat())


def indexed_text(text: str, speaker: str, date: str) -> str:
    """What the lexical index holds for a memory, and what its key is made of: ``[<date>] <speaker>:
    <text>``. The embedder reads the text alone: measured on the long-dialogue set
    (benchmarks/long_dialogues.py, development conversations), dense any@5 was 0.800 for the text,
    0.780 for ``speaker: "text"``, 0.735 for this form and 0.595 for ``speaker: text``; the speaker is
    ranked as a field of its own (``record.names``). With the date and speaker in the key, one
    memory's indexed text never carries another source's speaker or date. Users are shown the text
    alone."""
    return f"[{date}] {speaker}: {text}"


def header_of(indexed: str, text: str) -> tuple[str, str] | None:
    """The date and speaker that ``indexed`` (``indexed_text``) gives ``text``; None when it is the text
    alone."""
    if not indexed.startswith("[") or not indexed.endswith(f": {text}"):
        return None
    date, found, speaker = indexed[1 : len(indexed) - len(text) - 2].partition("] ")
    return (date, speaker) if found else None


def contextual_text(text: str, role: str, context: RecordContext, extra: dict[str, Any] | None = None) -> str:
    """The indexed text of ``text`` recorded by ``context`` with a record's own fields ``extra``."""
    return indexed_text(text, speaker_of(role, context.agent_id, extra), date_of(extra))


def chunk_text(text: str, words: int = CHUNK_WORDS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """Long text in overlapping word windows; short text as is."""
    tokens = text.split()
    if len(tokens) <= words:
        return [text.strip()] if text.strip() else []
    step = words - overlap
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens) - overlap, step)]


def chunk_count(text: str, words: int = CHUNK_WORDS, overlap: int = CHUNK_OVERLAP) -> int:
    """How many chunks ``chunk_text(text)`` makes, without making them."""
    tokens = len(text.split())
    if tokens <= words:
        return 1 if tokens else 0
    return len(range(0, tokens - overlap, words - overlap))


def text_pieces(text: str, windows: int, words: int = CHUNK_WORDS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """``text`` in pieces of at most ``windows`` of ``chunk_text``'s windows each, cut where a window
    starts, so the pieces' chunks are the whole text's chunks, in order (a long text is recorded a
    piece at a time, never all its chunks at once)."""
    tokens = text.split()
    step = words - overlap
    starts = range(0, len(tokens) - overlap, step)
    if len(starts) <= windows:
        return [text]
    return [" ".join(tokens[i : i + windows * step + overlap]) for i in starts[::windows]]

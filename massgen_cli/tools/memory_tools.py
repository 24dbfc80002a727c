"""Memory tools (``memory.tools``): an agent searches the long-term memories it may see, saves what it
decides is worth keeping, and marks a memory it found wrong or outdated as stale.

Visibility is retrieval's own, turn-aware: in turn N an agent finds its own memories and those the
winners of earlier turns recorded in the attempt that won, never a peer's work of turn N. A save is the
agent's record of this turn and attempt, so the others find it only once that attempt wins the turn
(a rejected attempt's saves stay out of their sight). A stale memory is kept, for audit, but no longer
found or retrieved by anyone. Long-term memory itself (the memory runtime) answers through
``AgentMemory``; this module only speaks with the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.text import one_line
from massgen_cli.tool_contract import DATES, AgentMemory, FoundMemory, MemoryQuery, SavedMemory
from massgen_cli.tools.base import Tool, ToolError, argument, schema

SEARCH_LIMIT = 8
"""The most memories one ``memory_search`` returns."""
HIT_CHARS = 1_000
SAVE_CHARS = 4_000
KIND_CHARS = 32
REASON_CHARS = 500
SCOPES = ("session", "all_sessions")
GUIDANCE = (
    "Long-term memory: memory_search finds what you kept and what the winners of earlier turns kept "
    "(with ids); memory_save keeps a fact, preference or note for later turns (the others see it once "
    "your answer wins); memory_forget marks a memory you found wrong or outdated as stale, with the reason."
)


def memory_tools(memory: AgentMemory, agent_id: str) -> list[Tool]:
    """``memory_search``, ``memory_save`` and ``memory_forget`` for ``agent_id``."""
    scopes = SCOPES if memory.all_sessions_allowed(agent_id) else SCOPES[:1]
    calls = MemoryToolCalls(memory, agent_id, scopes)
    return [
        Tool(_search_spec(scopes), calls.search),
        Tool(_save_spec(), calls.save),
        Tool(_forget_spec(), calls.forget),
    ]


@dataclass(frozen=True)
class MemoryToolCalls:
    """What each memory tool does when ``agent_id`` calls it (``scopes``: the search scopes it may ask)."""

    memory: AgentMemory
    agent_id: str
    scopes: tuple[str, ...]

    async def search(self, arguments: dict[str, Any]) -> str:
        query = _text(arguments, "query", HIT_CHARS)
        scope = argument(arguments, "scope", str, "session")
        if scope not in self.scopes:
            raise ToolError(
                f"scope must be one of {', '.join(self.scopes)} (this run searches its own session)"
            )
        since, until = (argument(arguments, name, str, "").strip() or None for name in ("since", "until"))
        asked = MemoryQuery(query, SEARCH_LIMIT, scope == "all_sessions", since, until)
        found = await self.memory.search_visible(self.agent_id, asked)
        return _listing(found, self.memory.session_id)

    async def save(self, arguments: dict[str, Any]) -> str:
        text = _text(arguments, "text", SAVE_CHARS)
        kind = str(argument(arguments, "kind", str, "note")).strip().lower() or "note"
        if len(kind) > KIND_CHARS:
            raise ToolError(f"argument 'kind' is one word or two (at most {KIND_CHARS} characters)")
        saved = await self.memory.save_memory(self.agent_id, text, kind)
        return _saved_text(saved, kind)

    async def forget(self, arguments: dict[str, Any]) -> str:
        memory_id = _text(arguments, "id", 100)
        reason = _text(arguments, "reason", REASON_CHARS)
        note = await self.memory.mark_stale(self.agent_id, memory_id, reason)
        if note is None:
            raise ToolError(f"no memory {memory_id} among those you can see (memory_search shows their ids)")
        if not note.newly:
            return f"Memory {memory_id} was already marked stale by {note.marked_by}: {note.reason}"
        return f"Marked memory {memory_id} stale: it is no longer found or retrieved (kept for audit)."


def _search_spec(scopes: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        "memory_search",
        f"Search the long-term memories you can see: yours and those of earlier turns' winners "
        f"(at most {SEARCH_LIMIT}, best first, each with its id, score, who recorded it and when, "
        "and what was recorded just before and after it).",
        schema(
            {
                "query": {"type": "string", "description": "What to look for."},
                "scope": {
                    "type": "string",
                    "enum": list(scopes),
                    "description": "'session' (default): this session's memories"
                    + ("; 'all_sessions': every session's." if len(scopes) > 1 else "."),
                },
                "since": {"type": "string", "description": f"Only memories dated from: {DATES}."},
                "until": {"type": "string", "description": f"Only memories dated up to: {DATES}."},
            },
            ["query"],
        ),
    )


def _save_spec() -> ToolSpec:
    return ToolSpec(
        "memory_save",
        "Keep a text in long-term memory for later turns, as yours; the other agents see it once "
        "your answer wins this turn. Returns the memory id.",
        schema(
            {
                "text": {"type": "string", "description": f"What to keep ({SAVE_CHARS} characters at most)."},
                "kind": {
                    "type": "string",
                    "description": "What it is: fact, preference, note (default) or another word.",
                },
            },
            ["text"],
        ),
    )


def _forget_spec() -> ToolSpec:
    return ToolSpec(
        "memory_forget",
        "Mark a memory you can see (by its id, from memory_search) as stale, with the reason: it is "
        "no longer found or retrieved, and kept for audit.",
        schema(
            {
                "id": {"type": "string", "description": "The memory's id."},
                "reason": {"type": "string", "description": "Why it is wrong or outdated."},
            },
            ["id", "reason"],
        ),
    )


def _text(arguments: dict[str, Any], name: str, limit: int) -> str:
    """A required, non-empty text argument of at most ``limit`` characters."""
    value = str(argument(arguments, name, str)).strip()
    if not value:
        raise ToolError(f"argument '{name}' must not be empty")
    if len(value) > limit:
        raise ToolError(f"argument '{name}' has {len(value):,} characters; at most {limit:,} are taken")
    return value


def _listing(found: list[FoundMemory], session_id: str) -> str:
    if not found:
        return "No memories found."
    lines = [f"{len(found)} memor{'y' if len(found) == 1 else 'ies'} found, best first:"]
    for number, hit in enumerate(found, start=1):
        where = f"{hit.agent_id}, turn {hit.turn}"
        if hit.session_id != session_id:
            where += f", session {hit.session_id}"
        kind = f" ({hit.kind})" if hit.kind else ""
        lines.append(f"{number}. id {hit.id}  score {hit.score:.3f}  [{where}]{kind}")
        lines.append(f"   {one_line(hit.text, HIT_CHARS)}")
        lines += [
            f"   {'before' if near.offset < 0 else 'after'} [{near.agent_id}, turn {near.turn}]: "
            f"{one_line(near.text, HIT_CHARS)}"
            for near in hit.nearby
        ]
    return "\n".join(lines)


def _saved_text(saved: SavedMemory, kind: str) -> str:
    ids = [*saved.added, *saved.existing]
    if not ids:
        raise ToolError("nothing was saved (the text was empty)")
    noun = "memory" if len(ids) == 1 else "memories"
    known = f" ({len(saved.existing)} already known, now also yours)" if saved.existing else ""
    return f"Saved as {kind} {noun} {', '.join(ids)}{known}."

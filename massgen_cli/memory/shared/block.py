"""How the shared memory block reads: one system message, right after the first system message, with the
sections that are configured: ``=== SHARED CONVERSATION MEMORY ===`` (answers and votes as
``[agent_id]: content``, chosen by recency and by relevance to the question, within ``window``),
``=== SHARED PERSISTENT MEMORY ===`` (long-term knowledge, turn-aware), the scoped entries in effect and
the session slots, capped at ``token_budget`` tokens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from massgen_cli.blocks import (
    SESSION_SLOTS,
    SHARED_BLOCKS,
    SHARED_CONVERSATION,
    SHARED_ENTRIES,
    SHARED_PERSISTENT,
)
from massgen_cli.memory.context.conversation import ConversationMemory, StoredMessage
from massgen_cli.memory.shared.entries import SharedEntries
from massgen_cli.messages import Message
from massgen_cli.tokens import count_text_tokens

CONVERSATION_HEADER = SHARED_CONVERSATION
PERSISTENT_HEADER = SHARED_PERSISTENT
ENTRIES_HEADER = SHARED_ENTRIES
SLOTS_HEADER = SESSION_SLOTS
SHARED_HEADERS = SHARED_BLOCKS
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


def conversation_lines(conversation: ConversationMemory, window: int, question: str) -> list[str]:
    """``[agent_id]: content`` of the shared conversation's entries chosen for ``question``."""
    chosen = select_entries(conversation.items, window, question)
    return [f"[{item.agent_id}]: {item.message.get('content', '')}" for item in chosen]


def entry_lines(entries: SharedEntries, turn: int) -> list[str]:
    """The scoped entries in effect in ``turn`` (slots are shown apart)."""
    effect = entries.in_effect(turn)
    return [f"[{e.agent_id}] {e.type} ({e.scope}): {e.content}" for e in effect if not e.is_slot]


def slot_lines(entries: SharedEntries, turn: int, facts: SessionFacts) -> list[str]:
    """The session slots, then who is active and who has won."""
    lines = [f"{name}: {value}" for name, value in entries.slots(turn).items()]
    if facts.active_agent:
        lines.append(f"active agent: {facts.active_agent} (last winner)")
    if facts.visited_agents:
        lines.append(f"visited agents: {', '.join(facts.visited_agents)}")
    return lines


def fit_block(sections: list[tuple[str, list[str]]], token_budget: int) -> Message | None:
    """The non-empty sections as one system message within ``token_budget`` tokens (the oldest line of
    the longest section dropped first), or None when nothing is left to show."""
    sections = [(header, lines) for header, lines in sections if lines]
    while sections:
        text = "\n".join(line for header, lines in sections for line in (header, *lines))
        if count_text_tokens(text) <= token_budget:
            return {"role": "system", "content": text}
        longest = max(range(len(sections)), key=lambda i: len(sections[i][1]))
        header, lines = sections[longest]
        sections[longest] = (header, lines[1:])
        sections = [(h, ls) for h, ls in sections if ls]
    return None

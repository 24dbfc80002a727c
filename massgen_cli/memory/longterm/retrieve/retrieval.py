"""Retrieval for an agent step: the query, the hits that fit the budget, and the injected
``Relevant memories:`` message. When to retrieve is decided in ``memory.runtime.recall``.
"""

from __future__ import annotations

from collections.abc import Sequence

from massgen_cli.memory.longterm.record.memories import MemoryHit
from massgen_cli.messages import Message
from massgen_cli.tokens import count_text_tokens

HEADER = "Relevant memories:"
QUERY_CONTEXT_MESSAGES = 4
QUERY_CHARS = 2000


def build_query(question: str, history: Sequence[Message]) -> str:
    """The task first, then the latest user and assistant words; never a system prompt."""
    recent = [
        str(m.get("content") or "")
        for m in history
        if m.get("role") in ("user", "assistant") and m.get("content")
    ][-QUERY_CONTEXT_MESSAGES:]
    return "\n".join([question, *reversed(recent)])[:QUERY_CHARS]


def within_budget(hits: Sequence[MemoryHit], token_budget: int) -> list[MemoryHit]:
    """The best hits whose lines fit in ``token_budget`` tokens (one key, one line)."""
    chosen, used, seen = [], count_text_tokens(HEADER), set()
    for hit in hits:
        if hit.memory.key in seen:
            continue
        cost = count_text_tokens(attribution_line(hit))
        if used + cost > token_budget:
            continue
        chosen.append(hit)
        used += cost
        seen.add(hit.memory.key)
    return chosen


def attribution_line(hit: MemoryHit) -> str:
    return f"[From {hit.source.agent_id} Turn {hit.source.turn}] {hit.text}"


def memory_message(hits: Sequence[MemoryHit]) -> Message | None:
    """The one system message that carries retrieved memories, or None when there are none."""
    if not hits:
        return None
    return {"role": "system", "content": "\n".join([HEADER, *(attribution_line(hit) for hit in hits)])}

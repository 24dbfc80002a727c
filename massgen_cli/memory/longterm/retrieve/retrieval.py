"""Retrieval for an agent step: the query, the hits that fit the budget, and the injected
``Relevant memories:`` message. When to retrieve is decided in ``memory.runtime.recall``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from massgen_cli.blocks import RELEVANT_MEMORIES
from massgen_cli.memory.longterm.record.memories import MemoryHit, Source
from massgen_cli.messages import Message
from massgen_cli.tokens import count_text_tokens

HEADER = RELEVANT_MEMORIES
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
    """The best hits whose lines fit in ``token_budget`` tokens, each memory shown once: a hit with the
    memories recorded around it when they fit too, else alone. A memory around a hit is left out when
    it is a hit itself (it has its own line) or was shown already."""
    chosen, used, shown = [], count_text_tokens(HEADER), set()
    ranked = {hit.id for hit in hits}
    for hit in hits:
        if hit.id in shown:
            continue
        new = tuple(turn for turn in hit.context if turn.id not in shown and turn.id not in ranked)
        for candidate in (replace(hit, context=new), replace(hit, context=())):
            cost = count_text_tokens(hit_lines(candidate))
            if used + cost <= token_budget:
                chosen.append(candidate)
                used += cost
                shown.update([hit.id, *(turn.id for turn in candidate.context)])
                break
    return chosen


def shown_ids(hits: Sequence[MemoryHit]) -> list[str]:
    """The memories the hits put in front of an agent: each hit, then the memories shown around it."""
    return [memory_id for hit in hits for memory_id in (hit.id, *(turn.id for turn in hit.context))]


def attribution_line(hit: MemoryHit) -> str:
    return _attributed(hit.source, hit.text)


def hit_lines(hit: MemoryHit) -> str:
    """A hit's line, then a line for each memory recorded around it (before or after it, in order)."""
    around = [
        f"  {'before' if turn.offset < 0 else 'after'}: {_attributed(turn.source, turn.text)}"
        for turn in hit.context
    ]
    return "\n".join([attribution_line(hit), *around])


def _attributed(source: Source, text: str) -> str:
    """``[From <agent> Turn <n>] text``, with an imported speaker before the text (``Caroline: ...``)."""
    speaker = source.extra.get("speaker")
    return f"[From {source.agent_id} Turn {source.turn}] {f'{speaker}: ' if speaker else ''}{text}"


def memory_message(hits: Sequence[MemoryHit]) -> Message | None:
    """The one system message that carries retrieved memories, or None when there are none."""
    if not hits:
        return None
    return {"role": "system", "content": "\n".join([HEADER, *(hit_lines(hit) for hit in hits)])}

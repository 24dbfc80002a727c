"""Compression: fit a conversation under a token target by summarising its oldest span.

First, bulky tool results the model has already seen are cut down to their first line (oldest
first), which is often enough. Otherwise kept: every system message, the latest user message, the
results of the last tool call when the model has not seen them yet, and the newest messages that
fit. An assistant message with tool calls and the tool results answering it move as one unit, so no
call loses its result and no result loses its call. The dropped span (with any earlier summary
folded in) becomes one summary message placed after the leading system messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from massgen_cli.memory.context.monitor import ContextMonitor
from massgen_cli.messages import Message, content_text
from massgen_cli.tokens import count_text_tokens

SUMMARY_PREFIX = "[Conversation summary]"
MAX_SUMMARY_TOKENS = 800
MIN_SUMMARY_TOKENS = 48
BULKY_TOOL_RESULT_TOKENS = 200
WORDS_PER_MESSAGE = 40

Summarizer = Callable[[list[Message], str, int], Awaitable[str]]
"""(dropped messages, previous summary, token budget) → summary text."""


@dataclass
class CompressionResult:
    messages: list[Message]
    dropped: list[Message] = field(default_factory=list)
    summary: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    kept_count: int = 0
    note: str = ""
    shortened: list[Message] = field(default_factory=list)
    """The tool results cut down to their first line (as they were before), oldest first."""


def is_summary(message: Message) -> bool:
    return message.get("role") == "system" and str(message.get("content", "")).startswith(SUMMARY_PREFIX)


def _units(messages: Sequence[Message], movable: Sequence[int]) -> list[list[int]]:
    """Indices grouped so an assistant tool-call message and its tool results stay together."""
    units: list[list[int]] = []
    open_calls: set[str] = set()
    for index in movable:
        message = messages[index]
        if message.get("role") == "tool" and units and message.get("tool_call_id") in open_calls:
            units[-1].append(index)
            continue
        units.append([index])
        open_calls = {call.get("id") for call in message.get("tool_calls") or []}
    return units


def _pinned(messages: Sequence[Message]) -> set[int]:
    """System messages, the latest user message, and tool results the model has not seen yet."""
    pinned = {i for i, m in enumerate(messages) if m.get("role") == "system" and not is_summary(m)}
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return pinned | ({users[-1]} if users else set()) | set(_unseen_results(messages))


def _unseen_results(messages: Sequence[Message]) -> list[int]:
    """The last tool call and its results when the request ends with them (the model asks next)."""
    if not messages or messages[-1].get("role") != "tool":
        return []
    return _units(messages, range(len(messages)))[-1]


async def compress(
    messages: Sequence[Message],
    monitor: ContextMonitor,
    *,
    target_tokens: int,
    overhead_tokens: int = 0,
    summarize: Summarizer | None = None,
) -> CompressionResult:
    """Fit ``messages`` (plus ``overhead_tokens`` of tools and priming) under ``target_tokens``: bulky
    old tool results are cut down first; if that is not enough, the oldest span is summarised."""
    before = monitor.messages_tokens(messages) + overhead_tokens
    messages, shortened = shorten_tool_results(messages, monitor, target_tokens - overhead_tokens)
    if shortened and monitor.messages_tokens(messages) + overhead_tokens <= target_tokens:
        after = monitor.messages_tokens(messages) + overhead_tokens
        return CompressionResult(messages, [], "", before, after, len(messages), shortened=shortened)
    result = await _summarise_oldest(messages, monitor, target_tokens, overhead_tokens, summarize)
    result.tokens_before, result.shortened = before, shortened
    return result


def shorten_tool_results(
    messages: Sequence[Message], monitor: ContextMonitor, target_tokens: int
) -> tuple[list[Message], list[Message]]:
    """``messages`` with bulky tool results (but those the model has not seen) cut to their first line,
    oldest first, until they fit ``target_tokens``; and the originals of those cut."""
    messages, shortened = list(messages), []
    total = monitor.messages_tokens(messages)
    unseen = _unseen_results(messages)
    for index, message in enumerate(messages):
        if total <= target_tokens:
            break
        tokens = monitor.message_tokens(message)
        if message.get("role") != "tool" or index in unseen or tokens < BULKY_TOOL_RESULT_TOKENS:
            continue
        messages[index] = _shortened(message, tokens)
        total += monitor.message_tokens(messages[index]) - tokens
        shortened.append(message)
    return messages, shortened


def _shortened(message: Message, tokens: int) -> Message:
    first_line = content_text(message.get("content")).split("\n", 1)[0][:200]
    name = message.get("name") or "tool"
    note = f"[the rest of this {name} result was removed to save context: {tokens:,} tokens]"
    return {**message, "content": f"{first_line}\n{note}"}


async def _summarise_oldest(
    messages: list[Message],
    monitor: ContextMonitor,
    target_tokens: int,
    overhead_tokens: int,
    summarize: Summarizer | None,
) -> CompressionResult:
    before = monitor.messages_tokens(messages) + overhead_tokens
    pinned = _pinned(messages)
    pinned_tokens = sum(monitor.message_tokens(messages[i]) for i in pinned) + overhead_tokens
    movable = [i for i in range(len(messages)) if i not in pinned and not is_summary(messages[i])]
    previous = "\n".join(_summary_body(m) for m in messages if is_summary(m))
    if pinned_tokens > target_tokens:
        kept: set[int] = set()
        note = (
            f"system messages, the latest user message and unseen tool results alone take "
            f"{pinned_tokens:,} tokens, over the target of {target_tokens:,}; kept them and dropped the rest"
        )
        reserve = 0
    else:
        room = target_tokens - pinned_tokens
        reserve = min(MAX_SUMMARY_TOKENS, room, max(room // 4, MIN_SUMMARY_TOKENS))
        kept, note = (
            _newest_that_fit(
                messages, monitor, _units(messages, movable), target_tokens - pinned_tokens - reserve
            ),
            "",
        )
    dropped_indices = [i for i in movable if i not in kept]
    summaries = [i for i, m in enumerate(messages) if is_summary(m)]
    if not dropped_indices and not summaries:
        return CompressionResult(
            messages, tokens_before=before, tokens_after=before, kept_count=len(messages), note=note
        )
    dropped = [messages[i] for i in dropped_indices]
    summary_text = ""
    body_budget = reserve - monitor.message_tokens(_summary_message(len(messages), ""))
    if body_budget > 0 and (dropped or previous):
        summary_text = await _summary(dropped, previous, body_budget, monitor, summarize)
    result = _assemble(messages, pinned, kept, summary_text, len(dropped))
    after = monitor.messages_tokens(result) + overhead_tokens
    if summary_text and after > target_tokens and pinned_tokens <= target_tokens:
        summary_text = ""  # token estimates of a cut text can be off by one or two: never break the target
        result = _assemble(messages, pinned, kept, summary_text, len(dropped))
        after = monitor.messages_tokens(result) + overhead_tokens
    return CompressionResult(result, dropped, summary_text, before, after, len(kept), note)


def _newest_that_fit(
    messages: Sequence[Message], monitor: ContextMonitor, units: list[list[int]], room: int
) -> set[int]:
    kept: set[int] = set()
    for unit in reversed(units):
        cost = sum(monitor.message_tokens(messages[i]) for i in unit)
        if cost > room:
            break
        room -= cost
        kept.update(unit)
    return kept


def _assemble(
    messages: Sequence[Message], pinned: set[int], kept: set[int], summary: str, dropped_count: int
) -> list[Message]:
    result: list[Message] = []
    summary_message = _summary_message(dropped_count, summary)
    placed = not summary
    for index, message in enumerate(messages):
        if not placed and not (index in pinned and message.get("role") == "system"):
            result.append(summary_message)
            placed = True
        if index in pinned or index in kept:
            result.append(message)
    if not placed:
        result.append(summary_message)
    return result


def _summary_message(dropped_count: int, summary: str) -> Message:
    return {
        "role": "system",
        "content": f"{SUMMARY_PREFIX} {dropped_count} earlier message(s) were compressed:\n{summary}",
    }


def _summary_body(message: Message) -> str:
    text = str(message.get("content", ""))
    return text.split("\n", 1)[1] if "\n" in text else ""


async def _summary(
    dropped: list[Message], previous: str, budget: int, monitor: ContextMonitor, summarize: Summarizer | None
) -> str:
    text = ""
    if summarize is not None:
        try:
            text = (await summarize(dropped, previous, budget)).strip()
        except Exception:  # any summariser failure falls back to the extractive summary
            text = ""
    return truncate_to_tokens(text or extractive_summary(dropped, previous), budget, monitor.model)


def extractive_summary(dropped: Sequence[Message], previous: str = "") -> str:
    """A summary made of the first words of each dropped message, oldest first."""
    lines = [f"(earlier) {previous}"] if previous else []
    for message in dropped:
        content = " ".join(content_text(message.get("content")).split()[:WORDS_PER_MESSAGE])
        calls = [call.get("function", {}).get("name", "?") for call in message.get("tool_calls") or []]
        label = message.get("role", "?") + (f" ({message['name']})" if message.get("name") else "")
        detail = content + (f" [called: {', '.join(calls)}]" if calls else "")
        lines.append(f"- {label}: {detail}")
    return "\n".join(lines)


def truncate_to_tokens(text: str, budget: int, model: str | None) -> str:
    """``text`` cut (at a line or word end) so it counts at most ``budget`` tokens."""
    if count_text_tokens(text, model) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count_text_tokens(text[:middle] + " …", model) <= budget:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    cut = cut[: cut.rfind(" ")] if " " in cut else cut
    return cut + " …" if cut else ""

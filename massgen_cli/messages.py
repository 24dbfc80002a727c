"""The chat message, as every backend, thread and memory part passes it: OpenAI's chat format.

A message holds only what a provider is sent: its role, its content, and for tool use the calls an
assistant made (``tool_calls``) or the call a tool result answers (``tool_call_id``, ``name``); an
assistant message may carry a provider's own reasoning records (``reasoning_items``, OpenAI's Responses
API), which only that API is given back. What memory keeps beside a message (ids, timestamps, authors,
reasoning text) lives beside it, never in it.
"""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict, cast

Role = Literal["system", "user", "assistant", "tool"]


class FunctionCall(TypedDict):
    """The function an assistant called; ``arguments`` is JSON text, as providers send it."""

    name: str
    arguments: str


class ToolCallPart(TypedDict):
    """One tool call inside an assistant message."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class Message(TypedDict, total=False):
    """One chat message. ``content`` is text, None (an assistant message with only tool calls), or a
    provider's list of content parts."""

    role: Required[Role]
    content: Required[str | list[Any] | None]
    tool_calls: list[ToolCallPart]
    tool_call_id: str
    name: str
    reasoning_items: list[dict[str, Any]]


PROVIDER_ONLY_KEYS = ("reasoning_items",)


def for_chat_completions(messages: list[Message]) -> list[Message]:
    """``messages`` without what only another API reads (a Chat Completions server rejects it)."""
    return [_without_provider_keys(message) for message in messages]


def _without_provider_keys(message: Message) -> Message:
    if not any(key in message for key in PROVIDER_ONLY_KEYS):
        return message
    kept = dict(message)
    for key in PROVIDER_ONLY_KEYS:
        kept.pop(key, None)
    return cast(Message, kept)


def inject_after_first_system(messages: list[Message], extra: Message) -> list[Message]:
    """``messages`` with ``extra`` right after the first system message (first if there is none)."""
    position = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "system"), 0)
    return [*messages[:position], extra, *messages[position:]]


def is_system_block(message: Message, *headers: str) -> bool:
    """Whether ``message`` is a system message whose text starts with one of ``headers``."""
    content = message.get("content")
    return message.get("role") == "system" and isinstance(content, str) and content.startswith(headers)


def tool_exchanges_as_text(messages: list[Message]) -> list[Message]:
    """``messages`` for a model without tool calls: an assistant's calls and the tool results written out
    as plain assistant and user text, in order."""
    names = {call["id"]: call["function"]["name"] for m in messages for call in m.get("tool_calls") or ()}
    plain: list[Message] = []
    for message in messages:
        if message["role"] == "tool":
            name = names.get(message.get("tool_call_id", ""), message.get("name", "a tool"))
            plain.append({"role": "user", "content": f"[result of {name}]\n{message.get('content') or ''}"})
        elif message.get("tool_calls"):
            calls = [
                f"[called {c['function']['name']}({c['function']['arguments']})]"
                for c in message["tool_calls"]
            ]
            text = "\n".join([str(message.get("content") or ""), *calls]).strip()
            plain.append({"role": "assistant", "content": text})
        else:
            plain.append(message)
    return plain

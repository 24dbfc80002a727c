"""The chat message, as every backend, thread and memory part passes it: OpenAI's chat format.

A message holds only what a provider is sent: its role, its content, and for tool use the calls an
assistant made (``tool_calls``) or the call a tool result answers (``tool_call_id``, and the tool's
``name``, which Gemini's function responses need and Chat Completions does not take); an assistant
message may carry a provider's own reasoning records (``reasoning_items``, OpenAI's Responses API),
which only that API is given back. Each backend sends what its provider's schema holds
(``for_chat_completions``), the system messages as one (``one_system_message``). What memory keeps
beside a message (ids, timestamps, authors, reasoning text) lives beside it, never in it.

A step's task may carry images and files as typed parts (``AttachmentPart``), which each backend turns
into its provider's own parts; whatever is recorded (threads, memory, request logs) keeps their
placeholders instead (``recordable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Required, TypedDict, cast

from massgen_cli.attachments import Attachment

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


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class AttachmentPart(TypedDict):
    """An image or file sent with a message; each backend sends it as its provider's own part."""

    type: Literal["attachment"]
    attachment: Attachment


class Message(TypedDict, total=False):
    """One chat message. ``content`` is text, None (an assistant message with only tool calls), or a
    list of content parts (``TextPart``, ``AttachmentPart``, or a provider's own)."""

    role: Required[Role]
    content: Required[str | list[Any] | None]
    tool_calls: list[ToolCallPart]
    tool_call_id: str
    name: str
    reasoning_items: list[dict[str, Any]]


CHAT_COMPLETIONS_FIELDS: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "name", "tool_calls"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
}
"""The fields OpenAI's Chat Completions schema gives each role's message; strict compatible servers
refuse any other (a tool result's ``name``, another API's ``reasoning_items``)."""


def for_chat_completions(messages: list[Message]) -> list[Message]:
    """``messages`` as Chat Completions takes them: one system message, first (``one_system_message``),
    and each message with only its role's fields."""
    return [_schema_fields(message) for message in one_system_message(messages)]


def _schema_fields(message: Message) -> Message:
    fields = CHAT_COMPLETIONS_FIELDS.get(message["role"])
    if fields is None or fields.issuperset(message):
        return message
    return cast(Message, {key: value for key, value in message.items() if key in fields})


def one_system_message(messages: list[Message]) -> list[Message]:
    """``messages`` with their system messages (the system prompt, the context blocks after it, a
    compression's summary) merged into one, first, in their order: strict chat templates (Mistral's,
    several on vLLM and llama.cpp) refuse a second system message or one after the conversation began.
    Anthropic's and Gemini's backends join them into their system prompt the same way."""
    systems = [message for message in messages if message["role"] == "system"]
    if not systems or (len(systems) == 1 and messages[0] is systems[0]):
        return messages
    text = "\n\n".join(piece for piece in (content_text(m.get("content")) for m in systems) if piece)
    merged: Message = {"role": "system", "content": text}
    return [merged, *(message for message in messages if message["role"] != "system")]


def with_attachments(message: Message, attachments: Sequence[Attachment]) -> Message:
    """``message`` with ``attachments`` after its text, as typed parts (unchanged when there are none)."""
    if not attachments:
        return message
    text = content_text(message.get("content"))
    parts: list[Any] = [TextPart(type="text", text=text)] if text else []
    parts += [AttachmentPart(type="attachment", attachment=attachment) for attachment in attachments]
    return cast(Message, {**message, "content": parts})


def attachments_in(content: Any) -> list[Attachment]:
    """The attachments among ``content``'s parts."""
    if not isinstance(content, list):
        return []
    return [part["attachment"] for part in content if is_attachment_part(part)]


def text_parts(content: Any) -> str:
    """The text of ``content``: a string, or its text parts joined."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return content or ""


def content_text(content: Any) -> str:
    """``content`` as text: its text parts, and each attachment as its placeholder."""
    if not isinstance(content, list):
        return content or ""
    pieces = [
        part["attachment"].placeholder if is_attachment_part(part) else part.get("text", "")
        for part in content
        if isinstance(part, dict)
    ]
    return "\n".join(piece for piece in pieces if piece)


def recordable(message: Message) -> Message:
    """``message`` as records keep it: attachments as their placeholders, never their bytes."""
    if not attachments_in(message.get("content")):
        return message
    return cast(Message, {**message, "content": content_text(message.get("content"))})


def inline_text(message: Message) -> Message:
    """``message`` for a model that reads plain text only: its text, text files inlined, and images and
    documents as their placeholders."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    pieces = [
        (part["attachment"].text() if part["attachment"].kind == "text" else part["attachment"].placeholder)
        if is_attachment_part(part)
        else part.get("text", "")
        for part in content
        if isinstance(part, dict)
    ]
    return cast(Message, {**message, "content": "\n".join(piece for piece in pieces if piece)})


def is_attachment_part(part: Any) -> bool:
    """Whether a content part is an ``AttachmentPart``."""
    return isinstance(part, dict) and part.get("type") == "attachment"


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

"""What the APIs that take the system text apart from turns that must alternate share (Anthropic's
Messages, Gemini's generateContent): our messages split into the system text and those turns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from massgen_cli.messages import Message, text_parts

Converted = tuple[str, list[Any]]
"""One message in an API's terms: its role and its parts (blocks)."""


def alternating_turns(
    messages: list[Message], convert: Callable[[Message, dict[str, str]], Converted], parts_key: str
) -> tuple[str, list[dict[str, Any]]]:
    """``messages`` as (system text, turns). System and developer messages are joined into the system
    text; every other message is what ``convert`` makes of it (given each tool call's function name by
    its id), a message with no parts left out, and consecutive turns of one role merged, ``parts_key``
    naming where a turn holds its parts."""
    names = {call["id"]: call["function"]["name"] for m in messages for call in m.get("tool_calls") or ()}
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] in ("system", "developer"):
            system.append(text_parts(message.get("content")))
            continue
        role, parts = convert(message, names)
        if not parts:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1][parts_key].extend(parts)
        else:
            turns.append({"role": role, parts_key: parts})
    return "\n\n".join(part for part in system if part), turns

"""What the spans carry of the conversation itself, only when asked: with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (the variable the GenAI instrumentations
read), a model call's span carries ``gen_ai.system_instructions``, ``gen_ai.input.messages`` and
``gen_ai.output.messages``, and a tool call's ``gen_ai.tool.call.arguments`` and ``.result`` (its
summary), in the GenAI conventions' JSON shape (messages of parts). Secrets are redacted as in the logs,
each text part keeps its first ``PART_CHARS`` characters, and the input keeps its latest messages
within ``CONTENT_CHARS`` (how many were left out is ``massgen.input.messages_left_out``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from massgen_cli.backends.base import Completion
from massgen_cli.messages import Message, content_text
from massgen_cli.redaction import redact

CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
PART_CHARS = 8_000
CONTENT_CHARS = 32_000


def capture_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the spans are to carry the messages' content (``CAPTURE_VARIABLE`` set to true)."""
    value = (os.environ if environ is None else environ).get(CAPTURE_VARIABLE, "")
    return value.strip().lower() in ("true", "1", "yes")


def input_attributes(messages: Sequence[Message]) -> dict[str, Any]:
    """The system instructions and the latest input messages of a request, as span attributes."""
    system = [_text_part(content_text(m["content"])) for m in messages if m["role"] == "system"]
    said = [_message(message) for message in messages if message["role"] != "system"]
    kept: list[str] = []
    size = 0
    for item in reversed(said):
        encoded = json.dumps(item, ensure_ascii=False)
        if kept and size + len(encoded) > CONTENT_CHARS:
            break
        kept.append(encoded)
        size += len(encoded)
    attributes: dict[str, Any] = {
        "gen_ai.input.messages": f"[{', '.join(reversed(kept))}]",
        "massgen.input.messages_left_out": len(said) - len(kept),
    }
    if system:
        attributes["gen_ai.system_instructions"] = json.dumps(system, ensure_ascii=False)
    return attributes


def output_attributes(completion: Completion) -> dict[str, Any]:
    """The reply of a model call, as a span attribute."""
    parts = [_text_part(completion.text)] if completion.text else []
    parts += [_call_part(call.id, call.name, call.arguments) for call in completion.tool_calls]
    reply = {"role": "assistant", "parts": parts, "finish_reason": completion.finish_reason or "stop"}
    return {"gen_ai.output.messages": json.dumps([reply], ensure_ascii=False)}


def tool_arguments(arguments: Mapping[str, Any]) -> str:
    return _clip(json.dumps(redact(dict(arguments)), ensure_ascii=False))


def tool_result(summary: str) -> str:
    return _clip(redact(summary))


def _message(message: Message) -> dict[str, Any]:
    if message["role"] == "tool":
        response = _clip(redact(content_text(message["content"])))
        part = {"type": "tool_call_response", "id": message.get("tool_call_id", ""), "response": response}
        return {"role": "tool", "parts": [part]}
    text = content_text(message["content"])
    parts = [_text_part(text)] if text else []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        parts.append(_call_part(call["id"], function["name"], function.get("arguments", "")))
    return {"role": message["role"], "parts": parts}


def _text_part(text: str) -> dict[str, str]:
    return {"type": "text", "content": _clip(redact(text))}


def _call_part(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": redact(arguments)}


def _clip(text: str) -> str:
    return text if len(text) <= PART_CHARS else text[: PART_CHARS - 1] + "…"

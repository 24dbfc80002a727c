"""Our chat messages as Gemini's request: the system messages as its system instruction, the rest as
``contents`` of roles ``user`` and ``model`` (tool calls as ``function_call`` parts, their results as
``function_response`` parts), our tools as function declarations.

A model turn that Gemini must get back as it sent it (its thought signatures, the searches and code it
ran itself) is kept beside our message as a reasoning record (``REPLAY``) and sent back in its place.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from massgen_cli.backends.attachment_parts import gemini_part
from massgen_cli.backends.base import ToolSpec
from massgen_cli.backends.turns import alternating_turns
from massgen_cli.messages import Message, ToolCallPart, attachments_in, is_attachment_part, text_parts

REPLAY = "gemini_content"
"""The type of the reasoning record that holds a model turn's parts as Gemini sent them."""
CALL_PARTS = ("function_call", "tool_call", "tool_response")
"""Parts a request may hold only where it declares tools (else a turn is written out as text)."""


def to_gemini_contents(
    messages: list[Message], *, tool_parts: bool = True
) -> tuple[str, list[dict[str, Any]]]:
    """``messages`` as (system instruction, contents). Consecutive turns of one role are merged, as
    Gemini wants user and model turns to alternate. Without ``tool_parts`` (a request that declares no
    functions) calls and results are written out as text."""
    return alternating_turns(messages, lambda message, names: _converted(message, tool_parts, names), "parts")


def _converted(message: Message, tool_parts: bool, names: dict[str, str]) -> tuple[str, list[Any]]:
    text = text_parts(message.get("content"))
    if message["role"] == "tool":
        call_id = message["tool_call_id"]
        name = names.get(call_id, "tool")
        if tool_parts:
            response = {"id": call_id, "name": name, "response": {"output": text}}
            return "user", [{"function_response": response}]
        return "user", [{"text": f"[result of {name}: {text}]"}]
    if message["role"] == "assistant":
        return "model", _model_parts(message, text, tool_parts)
    if attachments_in(message.get("content")):
        parts = [_user_part(part) for part in message.get("content") or ()]
        return "user", [part for part in parts if part.get("text") != ""]
    return "user", [{"text": text}] if text else []


def _model_parts(message: Message, text: str, tool_parts: bool) -> list[Any]:
    """The turn as Gemini sent it, when it was kept, makes the calls this message holds (each answered
    after it) and may be sent here; else its text and calls."""
    kept = replayed_parts(message)
    kept_calls = {part["function_call"].get("id") for part in kept if "function_call" in part}
    same_calls = kept_calls == {call["id"] for call in message.get("tool_calls") or ()}
    if kept and same_calls and (tool_parts or not any(key in part for part in kept for key in CALL_PARTS)):
        return [_part_from_json(part) for part in kept]
    parts: list[Any] = [{"text": text}] if text else []
    for call in message.get("tool_calls") or ():
        parts.append(_function_call(call) if tool_parts else {"text": _call_as_text(call)})
    return parts


def replayed_parts(message: Message) -> list[dict[str, Any]]:
    """The parts of the model turn kept with ``message`` (JSON, bytes as base64), or none."""
    for item in message.get("reasoning_items") or ():
        if item.get("type") == REPLAY:
            return list(item.get("parts") or ())
    return []


def _part_from_json(part: dict[str, Any]) -> types.Part:
    """A kept part as the SDK's Part (its thought signature back to bytes)."""
    return types.Part.model_validate_json(json.dumps(part))


def _user_part(part: Any) -> dict[str, Any]:
    if is_attachment_part(part):
        return gemini_part(part["attachment"])
    return {"text": part.get("text", "")}


def _function_call(call: ToolCallPart) -> dict[str, Any]:
    function = call["function"]
    return {"function_call": {"id": call["id"], "name": function["name"], "args": _arguments(call)}}


def _call_as_text(call: ToolCallPart) -> str:
    arguments = json.dumps(_arguments(call), ensure_ascii=False)
    return f"[called {call['function']['name']}({arguments})]"


def _arguments(call: ToolCallPart) -> dict[str, Any]:
    arguments: Any = call["function"].get("arguments") or {}
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def function_declaration(tool: ToolSpec) -> dict[str, Any]:
    """A tool as Gemini's function declaration, its arguments' JSON schema as written."""
    return {"name": tool.name, "description": tool.description, "parameters_json_schema": tool.parameters}


def schema_instruction(schema: dict[str, Any]) -> str:
    """The JSON answer a request asks for, as an instruction (where Gemini cannot be held to a schema:
    beside its own tools on a model that cannot combine them)."""
    return (
        "Reply with one JSON object that matches this JSON schema, and nothing else:\n"
        f"{json.dumps(schema, separators=(',', ':'))}"
    )

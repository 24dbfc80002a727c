"""A Responses API request's ``input`` as the messages a turn reads (Chat Completions' shape, which
``conversation`` takes): a string is the question; messages (``input_text``/``output_text`` parts) are
the conversation; ``function_call`` items become an assistant message's ``tool_calls`` and their
``function_call_output`` items ``tool`` messages. Reasoning items (the agents' work of an earlier answer,
given back) are passed over; any other item is refused with a 400 naming it."""

from __future__ import annotations

from typing import Any

from massgen_cli.serve.conversation import text_of
from massgen_cli.serve.wire import bad_request

PASSED_OVER = frozenset({"reasoning"})
"""Items a client gives back that a turn does not read: the agents' work, which the session keeps."""


def chat_messages(given: Any) -> list[dict[str, Any]]:
    """``input`` (a string or a list of items) as Chat Completions messages."""
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        raise bad_request("input must be a string or a non-empty list of items", "input")
    messages: list[dict[str, Any]] = []
    for index, item in enumerate(given):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise bad_request(f"{where} must be an object", where)
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role"), "content": _content(item.get("content"), where)})
        elif kind == "function_call":
            _add_call(messages, item, where)
        elif kind == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": _output(item, where)}
            )
        elif kind not in PASSED_OVER:
            raise bad_request(f"{where}: items of type {kind!r} are not supported", f"{where}.type")
    return messages


def _content(content: Any, where: str) -> str:
    if isinstance(content, list):
        for number, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") not in ("input_text", "output_text"):
                raise bad_request(f"{where}.content[{number}]: only text parts are supported", where)
    return text_of(content, f"{where}.content")


def _add_call(messages: list[dict[str, Any]], item: dict[str, Any], where: str) -> None:
    """A ``function_call`` item joins the assistant message of the calls just before it (or starts one)."""
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not all(isinstance(value, str) and value for value in (call_id, name)) or not isinstance(
        arguments, str
    ):
        raise bad_request(f"{where}: a function_call needs call_id, name and arguments (a string)", where)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "assistant" and last.get("tool_calls"):
        last["tool_calls"].append(call)
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _output(item: dict[str, Any], where: str) -> str:
    if not isinstance(item.get("call_id"), str) or not item.get("call_id"):
        raise bad_request(f"{where}.call_id must name the call it answers", f"{where}.call_id")
    output = item.get("output")
    if isinstance(output, list):
        return _content(output, f"{where}.output")
    if not isinstance(output, str):
        raise bad_request(f"{where}.output must be text", f"{where}.output")
    return output

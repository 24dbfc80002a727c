"""A request's messages as a turn takes them: the conversation so far (user and assistant text), the
question (the last user message), and what follows it: the calls of the client's tools the team answered
with and the client's results (assistant messages with ``tool_calls``, each followed by one ``tool``
message per call), from which the turn goes on. Bounded by ``RequestLimits``; every refusal a 400 naming
the message that is wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from massgen_cli.messages import Message, ToolCallPart
from massgen_cli.serve.wire import RequestLimits, bad_request

IGNORED_ROLES = ("system", "developer")
"""Taken as said to the server, not to the agents: their system prompts come from the config (as in
MassGen's server)."""


@dataclass(frozen=True)
class Conversation:
    """The conversation before the question, the question, and the client's tool exchange after it."""

    history: list[Message]
    question: str
    exchange: tuple[Message, ...] = ()


def read_conversation(messages: Any, limits: RequestLimits, name: str = "messages") -> Conversation:
    """``messages`` (Chat Completions' shape) read and bounded; ``name`` is how errors name them."""
    if not isinstance(messages, list) or not messages:
        raise bad_request(f"{name} must be a non-empty list", name)
    if len(messages) > limits.max_messages:
        raise bad_request(
            f"{name} holds {len(messages):,} messages; at most {limits.max_messages:,} are taken",
            name,
            "too_many_messages",
        )
    said: list[Message] = []
    chars = 0
    for index, message in enumerate(messages):
        read = _message(message, f"{name}[{index}]")
        if read is None:
            continue
        chars += len(str(read.get("content") or "")) + sum(
            len(call["function"]["arguments"]) for call in read.get("tool_calls") or ()
        )
        if chars > limits.max_chars:
            raise bad_request(
                f"the {name} hold more than {limits.max_chars:,} characters (over at {name}[{index}])",
                name,
                "too_many_characters",
            )
        said.append(read)
    return _split(said, name)


def _message(message: Any, where: str) -> Message | None:
    """One message in the thread's form; None for one that is not passed on (system, developer)."""
    if not isinstance(message, dict):
        raise bad_request(f"{where} must be an object with a role and content", where)
    role = message.get("role")
    if role in IGNORED_ROLES:
        return None
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"{where}.tool_call_id must name the call it answers", f"{where}.tool_call_id")
        return {"role": "tool", "tool_call_id": call_id, "content": text_of(message.get("content"), where)}
    if role not in ("user", "assistant"):
        raise bad_request(
            f"{where}.role {role!r} is not supported: use user, assistant or tool", f"{where}.role"
        )
    read: Message = {"role": role, "content": text_of(message.get("content"), f"{where}.content")}
    calls = message.get("tool_calls") if role == "assistant" else None
    if calls:
        read["tool_calls"] = _calls(calls, f"{where}.tool_calls")
        read["content"] = read["content"] or None
    return read


def _calls(calls: Any, where: str) -> list[ToolCallPart]:
    if not isinstance(calls, list):
        raise bad_request(f"{where} must be a list of function calls", where)
    parts: list[ToolCallPart] = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(call, dict) and call.get("type") == "function" and isinstance(function, dict)):
            raise bad_request(f"{where}[{index}] must be a function call", f"{where}[{index}]")
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name):
            raise bad_request(f"{where}[{index}] needs an id and a function name", f"{where}[{index}]")
        if not (isinstance(arguments, str) and _json_object(arguments)):
            raise bad_request(
                f"{where}[{index}].function.arguments must be a JSON object, as a string",
                f"{where}[{index}].function.arguments",
            )
        parts.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    return parts


def _split(said: list[Message], name: str) -> Conversation:
    """The question is the last user message; after it may come only the client's tool exchange."""
    asked = max((i for i, message in enumerate(said) if message["role"] == "user"), default=None)
    if asked is None or not str(said[asked].get("content") or "").strip():
        raise bad_request(f"the last user message of {name} must be the question, with text", name)
    exchange = said[asked + 1 :]
    _check_exchange(exchange, name)
    history = [message for message in said[:asked] if _is_text(message)]
    return Conversation(history, str(said[asked]["content"]), tuple(exchange))


def _check_exchange(exchange: list[Message], name: str) -> None:
    """Each assistant message's calls answered by the tool messages right after it, nothing else."""
    waiting: list[str] = []
    for message in exchange:
        if message["role"] == "assistant" and message.get("tool_calls") and not waiting:
            waiting = [call["id"] for call in message["tool_calls"]]
        elif message["role"] == "tool" and message.get("tool_call_id") in waiting:
            waiting.remove(str(message.get("tool_call_id")))
        else:
            raise bad_request(
                f"after the question, {name} may hold only tool calls and their results, each call "
                "answered by one tool message right after it",
                name,
            )
    if waiting:
        raise bad_request(f"the tool call {waiting[0]} has no result in {name}", name)


def _is_text(message: Message) -> bool:
    """A message of the conversation so far: text of the user or the assistant (an earlier tool
    exchange, done, is left out)."""
    return message["role"] in ("user", "assistant") and not message.get("tool_calls")


def text_of(content: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        if any(part.get("type") not in ("text", "input_text", "output_text") for part in content):
            raise bad_request(f"{where}: only text parts are supported", where)
        return "\n".join(str(part.get("text", "")) for part in content)
    raise bad_request(f"{where} must be a string or a list of text parts", where)


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False

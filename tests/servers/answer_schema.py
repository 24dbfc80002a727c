"""What ``massgen serve`` answers, held to the ``openai`` SDK's response models: a chat completion, a
chunk, a Responses API response and each of its stream events, a model and the list of them, an error.
Each is validated with pydantic (types, required fields, Literal values), then walked: the SDK's models let
unknown keys through, a strict client does not, so every object may hold only its model's fields (less the
extensions this server documents: ``massgen_metadata``, ``reasoning_content``), and the fields OpenAI's
published schema requires but the SDK types as optional (``message.refusal``, ``choice.logprobs``…)
must be there."""

from __future__ import annotations

import functools
from typing import Any

import pydantic
from openai import BaseModel
from openai.types import Model
from openai.types.chat import chat_completion, chat_completion_chunk
from openai.types.chat.chat_completion import ChatCompletion
from openai.types.chat.chat_completion_chunk import ChatCompletionChunk
from openai.types.chat.chat_completion_message import ChatCompletionMessage
from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText, ResponseStreamEvent

EXTENSIONS: dict[type, frozenset[str]] = {
    ChatCompletion: frozenset({"massgen_metadata"}),
    ChatCompletionChunk: frozenset({"massgen_metadata"}),
    ChatCompletionMessage: frozenset({"reasoning_content"}),
    chat_completion_chunk.ChoiceDelta: frozenset({"reasoning_content"}),
    Response: frozenset({"massgen_metadata"}),
}
"""What this server adds to OpenAI's objects (docs/serve.md)."""
RESPONSE_FIELDS = ("id", "object", "created_at", "status", "error", "incomplete_details", "instructions",
                   "model", "output", "parallel_tool_calls", "metadata", "tool_choice", "tools",
                   "temperature", "top_p")  # fmt: skip
REQUIRED: dict[type, frozenset[str]] = {
    ChatCompletion: frozenset({"id", "object", "created", "model", "choices", "usage"}),
    chat_completion.Choice: frozenset({"index", "message", "finish_reason", "logprobs"}),
    ChatCompletionMessage: frozenset({"role", "content", "refusal"}),
    ChatCompletionChunk: frozenset({"id", "object", "created", "model", "choices"}),
    chat_completion_chunk.Choice: frozenset({"index", "delta", "finish_reason"}),
    Response: frozenset(RESPONSE_FIELDS),
    ResponseOutputMessage: frozenset({"id", "type", "role", "content", "status"}),
    ResponseOutputText: frozenset({"type", "text", "annotations"}),
}
"""The fields OpenAI's published schema requires of an object, the nullable ones included."""


@functools.cache
def _stream_event() -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(ResponseStreamEvent)


KINDS: dict[str, Any] = {
    "chat.completion": ChatCompletion,
    "chat.completion.chunk": ChatCompletionChunk,
    "response": Response,
    "model": Model,
}


def answer_problems(kind: str, data: Any) -> list[str]:
    """Where ``data`` (an answer of ``kind``: ``chat.completion``, ``chat.completion.chunk``,
    ``response``, ``response.event``, ``model``, ``model.list``, ``error``) is off the SDK's models."""
    if kind == "error":
        return _error_problems(data)
    if kind == "model.list":
        if (
            not isinstance(data, dict)
            or data.get("object") != "list"
            or not isinstance(data.get("data"), list)
        ):
            return ["a model list is {'object': 'list', 'data': [...]}"]
        return [problem for model in data["data"] for problem in answer_problems("model", model)]
    try:
        if kind == "response.event":
            parsed = _stream_event().validate_python(data)
        else:
            parsed = KINDS[kind].model_validate(data)
    except pydantic.ValidationError as error:
        return [f"{'.'.join(map(str, problem['loc']))}: {problem['msg']}" for problem in error.errors()]
    return _walk(parsed, kind)


def _walk(value: Any, where: str) -> list[str]:
    if isinstance(value, list):
        return [problem for index, item in enumerate(value) for problem in _walk(item, f"{where}[{index}]")]
    if not isinstance(value, BaseModel):
        return []
    kind = type(value)
    extra = set(value.model_extra or {}) - EXTENSIONS.get(kind, frozenset())
    problems = [f"{where}: '{name}' is not a field of {kind.__name__}" for name in sorted(extra)]
    missing = REQUIRED.get(kind, frozenset()) - value.model_fields_set
    problems += [f"{where}: required '{name}' is missing ({kind.__name__})" for name in sorted(missing)]
    for name in value.model_fields_set & set(type(value).model_fields):
        problems += _walk(getattr(value, name), f"{where}.{name}")
    return problems


def _error_problems(data: Any) -> list[str]:
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict) or set(data) != {"error"}:
        return ["an error is {'error': {...}} and nothing else"]
    if set(error) != {"message", "type", "param", "code"} or not isinstance(error["message"], str):
        return [f"an error holds message, type, param and code; got {sorted(error)}"]
    return []


def stream_problems(events: list[dict[str, Any]]) -> list[str]:
    """A Responses stream's order: numbered from 0 without a gap, opened by ``response.created`` and
    closed by ``response.completed`` (or ``response.failed``), each item added before it is done."""
    problems = [problem for event in events for problem in answer_problems("response.event", event)]
    numbers = [event.get("sequence_number") for event in events]
    if numbers != list(range(len(events))):
        problems.append(f"sequence numbers {numbers} are not 0, 1, 2…")
    kinds = [event.get("type") for event in events]
    if (
        not kinds
        or kinds[0] != "response.created"
        or kinds[-1] not in ("response.completed", "response.failed")
    ):
        problems.append(f"the stream runs {kinds[:1]} … {kinds[-1:]}")
    added = {e["output_index"] for e in events if e.get("type") == "response.output_item.added"}
    done = [e["output_index"] for e in events if e.get("type") == "response.output_item.done"]
    if sorted(done) != sorted(added) or done != sorted(done):
        problems.append(f"items added {sorted(added)} and done {done} do not pair up in order")
    return problems

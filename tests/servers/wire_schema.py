"""The providers' published request schemas, as their own SDKs type them, held against what reaches the
fake servers: Chat Completions and the Responses API (``openai``'s request TypedDicts), Anthropic's
Messages (``anthropic``'s), Gemini's generateContent (``google-genai``'s models, which forbid unknown
keys themselves). A body is validated with pydantic's ``TypeAdapter`` and walked key by key:
pydantic lets a TypedDict carry keys it does not declare, a strict server does not, so every object
below the top level may hold only its type's fields (the top level may carry a compatible server's own
parameters, sent as ``extra_body``, unless the server stands for OpenAI's own API, which refuses them).

Beyond the types, the rules strict servers apply: one system message, first (Mistral's chat template
and several others on vLLM and llama.cpp refuse a second, or one after the conversation began); and
OpenAI's own API refuses ``max_tokens`` for its reasoning models (``max_completion_tokens`` is the field).
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from typing import Any

import pydantic
import typing_extensions

NOT_CHECKED: tuple[Any, ...] = (Any, object)
WRAPPERS = {
    typing.Annotated,
    typing.Required,
    typing.NotRequired,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
}


XAI_TOOLS = frozenset({"x_search", "code_interpreter"})
"""xAI's own tools in its Responses API, as xAI documents them (its code interpreter takes no container)."""


def wire_violations(path: str, body: Any, *, stands_for: str | None = None) -> list[str]:
    """What in ``body`` (a request to ``path``) breaks its API's published schema; [] for paths of APIs
    these schemas do not cover. ``stands_for``: ``openai`` (OpenAI's own API), ``xai`` (xAI's, which
    adds its own tools to the Responses API), or None (an OpenAI-compatible server, or Anthropic)."""
    api = api_of(path)
    if api is None:
        return []
    if not isinstance(body, dict):
        return [f"the body of {path} is not a JSON object"]
    if api == "gemini":
        return _gemini_problems(body)
    openai_itself = stands_for == "openai"
    if stands_for == "xai" and isinstance(body.get("tools"), list):
        tools = [tool for tool in body["tools"] if not (isinstance(tool, dict) and tool["type"] in XAI_TOOLS)]
        body = {**body, "tools": tools}
    params = _params_type(api, bool(body.get("stream")))
    problems = _pydantic_problems(params, body)
    problems += _walk(params, body, "body", extra_keys=not openai_itself)
    problems += _system_messages(api, body)
    if openai_itself and "max_tokens" in body:
        problems.append(
            "body: 'max_tokens' is deprecated by OpenAI's API and refused by its reasoning models; "
            "send max_completion_tokens"
        )
    return problems


def api_of(path: str) -> str | None:
    """The API a request path calls: ``chat``, ``responses``, ``anthropic``, ``gemini``, or None."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"
    if route.endswith("/chat/completions"):
        return "chat"
    if route.endswith("/responses"):
        return "responses"
    if route.endswith("/messages"):
        return "anthropic"
    return None


def _gemini_fields() -> dict[str, Any]:
    """The fields of Gemini's generateContent request (camelCase, as the REST API names them) and the
    ``google-genai`` types of their values (pydantic models that forbid unknown keys)."""
    from google.genai import types as gemini

    return {
        "contents": list[gemini.Content],
        "systemInstruction": gemini.Content,
        "tools": list[gemini.Tool],
        "toolConfig": gemini.ToolConfig,
        "generationConfig": gemini.GenerationConfig,
        "safetySettings": list[gemini.SafetySetting],
        "cachedContent": str,
        "labels": dict[str, str],
    }


def _gemini_problems(body: dict[str, Any]) -> list[str]:
    """Gemini refuses a request with a field it does not know, at any depth."""
    fields = _gemini_fields()
    problems = [
        f"body: '{name}' is not a field of a generateContent request" for name in body.keys() - fields
    ]
    for name, value in body.items():
        if name in fields:
            problems += [
                problem.replace("body.", f"body.{name}.", 1)
                for problem in _pydantic_problems(fields[name], value)
            ]
    return problems


def _params_type(api: str, streaming: bool) -> Any:
    if api == "chat":
        from openai.types.chat import completion_create_params as chat

        return chat.CompletionCreateParamsStreaming if streaming else chat.CompletionCreateParamsNonStreaming
    if api == "responses":
        from openai.types.responses import response_create_params as responses

        if streaming:
            return responses.ResponseCreateParamsStreaming
        return responses.ResponseCreateParamsNonStreaming
    from anthropic.types import message_create_params as messages

    return messages.MessageCreateParamsStreaming if streaming else messages.MessageCreateParamsNonStreaming


def _system_messages(api: str, body: dict[str, Any]) -> list[str]:
    """One system message at most, and only as the first message (Anthropic's go in ``system``)."""
    listed = body.get("messages") if api in ("chat", "anthropic") else body.get("input")
    if not isinstance(listed, list):
        return []
    roles = [item.get("role") if isinstance(item, dict) else None for item in listed]
    where = [index for index, role in enumerate(roles) if role in ("system", "developer")]
    if api == "anthropic" and where:
        return [f"body.messages[{where[0]}]: Anthropic takes the system prompt in 'system', not as a message"]
    if len(where) > 1:
        return [f"body: {len(where)} system messages (at {where}); strict chat templates take one"]
    if where and where[0] != 0:
        return [f"body: the system message is at {where[0]}, after the conversation began"]
    return []


@functools.cache
def _adapter(kind: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(kind)


def _pydantic_problems(kind: Any, value: Any) -> list[str]:
    try:
        _adapter(kind).validate_python(value)
    except pydantic.ValidationError as error:
        return [f"body.{'.'.join(map(str, problem['loc']))}: {problem['msg']}" for problem in error.errors()]
    return []


@functools.cache
def _fields(kind: Any) -> dict[str, Any]:
    """A TypedDict's fields: name → type."""
    return typing.get_type_hints(kind, include_extras=True)


def _missing(kind: Any, value: dict[str, Any], where: str) -> list[str]:
    """The fields ``kind`` requires that ``value`` lacks, as pydantic reads its Required markers (the
    TypedDicts' own ``__required_keys__`` miss those written as strings)."""
    try:
        _adapter(kind).validate_python(value)
    except pydantic.ValidationError as error:
        return [
            f"{where}: required '{problem['loc'][0]}' is missing ({kind.__name__})"
            for problem in error.errors()
            if problem["type"] == "missing" and len(problem["loc"]) == 1
        ]
    return []


def _walk(kind: Any, value: Any, where: str, *, extra_keys: bool = False) -> list[str]:
    """Where ``value`` does not fit ``kind``: unknown or missing keys, wrong types, values outside a
    Literal; [] when it fits. ``extra_keys``: unknown keys of this object itself (not of the objects in
    it) are let through."""
    kind = _unwrapped(kind)
    origin = typing.get_origin(kind)
    if kind in NOT_CHECKED:
        return []
    if origin in (typing.Union, types.UnionType):
        return _walk_union(typing.get_args(kind), value, where)
    if origin is typing.Literal:
        allowed = typing.get_args(kind)
        return [] if value in allowed else [f"{where}: {value!r} is not one of {list(allowed)}"]
    if kind is type(None):
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if typing_extensions.is_typeddict(kind):
        return _walk_typeddict(kind, value, where, extra_keys)
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        if not isinstance(value, list):
            return [f"{where}: expected an array, got {type(value).__name__}"]
        (item,) = typing.get_args(kind) or (Any,)
        return [problem for i, each in enumerate(value) for problem in _walk(item, each, f"{where}[{i}]")]
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        _, item = typing.get_args(kind) or (str, Any)
        return [problem for key, each in value.items() for problem in _walk(item, each, f"{where}.{key}")]
    return _walk_scalar(kind, value, where)


def _unwrapped(kind: Any) -> Any:
    while typing.get_origin(kind) in WRAPPERS:
        kind = typing.get_args(kind)[0]
    return kind


def _walk_union(members: tuple[Any, ...], value: Any, where: str) -> list[str]:
    """[] when some member fits; else the problems of the member it was meant to be: of its JSON kind
    (object, array…), naming its ``type`` or ``role``, with the fewest problems."""
    ranked: list[tuple[bool, bool, int, list[str]]] = []
    for member in members:
        problems = _walk(member, value, where)
        if not problems:
            return []
        kind = _unwrapped(member)
        ranked.append((not _same_shape(kind, value), not _named_by(kind, value), len(problems), problems))
    return min(ranked, key=lambda rank: rank[:3])[3] if ranked else [f"{where}: fits none of its types"]


def _same_shape(kind: Any, value: Any) -> bool:
    """Whether ``value`` is the JSON kind ``kind`` is (an object, an array, or another)."""
    origin = typing.get_origin(kind)
    if typing_extensions.is_typeddict(kind) or origin in (dict, collections.abc.Mapping):
        return isinstance(value, dict)
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        return isinstance(value, list)
    return not isinstance(value, dict | list)


def _named_by(kind: Any, value: Any) -> bool:
    """Whether ``value`` is an object with the ``type`` or ``role`` the TypedDict ``kind`` requires."""
    if not (typing_extensions.is_typeddict(kind) and isinstance(value, dict)):
        return False
    hints = _fields(kind)
    return any(
        name in hints
        and typing.get_origin(_unwrapped(hints[name])) is typing.Literal
        and value.get(name) in typing.get_args(_unwrapped(hints[name]))
        for name in ("type", "role")
    )


def _walk_typeddict(kind: Any, value: Any, where: str, extra_keys: bool) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected an object ({kind.__name__}), got {type(value).__name__}"]
    hints = _fields(kind)
    problems = _missing(kind, value, where)
    if not extra_keys:
        problems += [
            f"{where}: '{name}' is not a field of {kind.__name__}" for name in value.keys() - hints.keys()
        ]
    for name, element in value.items():
        if name in hints:
            problems += _walk(hints[name], element, f"{where}.{name}")
    return problems


def _walk_scalar(kind: Any, value: Any, where: str) -> list[str]:
    if kind is bool:
        fits = isinstance(value, bool)
    elif kind is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is str:
        fits = isinstance(value, str)
    else:  # anything else the SDK names (a file, a date…): pydantic says
        try:
            _adapter(kind).validate_python(value)
        except (pydantic.ValidationError, pydantic.PydanticSchemaGenerationError, TypeError):
            return [f"{where}: not a valid {getattr(kind, '__name__', kind)}"]
        return []
    return [] if fits else [f"{where}: expected {kind.__name__}, got {value!r:.60}"]

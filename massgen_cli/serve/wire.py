"""OpenAI's Chat Completions shapes as this server reads and writes them: the request (its messages as
the conversation so far and the question), the completion and its stream chunks, usage, and errors
(``{"error": {"message", "type", "param", "code"}}``)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.errors import UsageError
from massgen_cli.events import Usage
from massgen_cli.messages import Message
from massgen_cli.redaction import redact
from massgen_cli.session import check_session_id

UNSUPPORTED = {
    "functions": "functions (deprecated) are not supported: give the client's functions as tools",
    "function_call": "function_call (deprecated) is not supported: give the client's functions as tools",
}


class ApiError(Exception):
    """An error answered with ``status`` in OpenAI's shape (the message redacted of secrets)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
    ):
        super().__init__(message)
        self.status, self.kind, self.code, self.param = status, kind, code, param

    def body(self) -> dict[str, Any]:
        return error_body(str(self), self.kind, self.code, self.param)


def error_body(
    message: str, kind: str = "server_error", code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": redact(message), "type": kind, "param": param, "code": code}}


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


@dataclass(frozen=True)
class ChatAsk:
    """What one request asks: the question, the conversation before it, the model (a served config's
    id), the session that remembers it (None: a temporary session) and how to answer."""

    model: str
    question: str
    history: list[Message]
    session_id: str | None
    stream: bool
    include_usage: bool
    not_applied: tuple[str, ...] = ()
    """The parameters given that are accepted and left to the config's models (``parameters``)."""
    tools: tuple[ToolSpec, ...] = ()
    """The client's own tools, offered to the agents beside theirs."""
    exchange: tuple[Message, ...] = ()
    """The calls of the client's tools after the question, with the client's results."""


@dataclass(frozen=True)
class RequestLimits:
    """What one request may ask a turn to carry: its messages, and their characters all together (what
    a turn's every step sends again, counts and keeps)."""

    max_messages: int = 2000
    max_chars: int = 2_000_000


def read_chat(body: Any, limits: RequestLimits | None = None) -> ChatAsk:
    """The request ``body`` as a ``ChatAsk``; an ``ApiError`` (400) naming the parameter that is wrong
    or over ``limits`` (``parameters.check_parameters``: unknown ones too). Sampling parameters
    (temperature, max_tokens…) are checked, accepted and left to the config's models."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("you must provide a model parameter", "model")
    from massgen_cli.serve.conversation import read_conversation
    from massgen_cli.serve.parameters import check_parameters
    from massgen_cli.serve.tool_specs import chat_tools

    for key, why in UNSUPPORTED.items():
        if body.get(key):
            raise bad_request(why, key)
    not_applied = check_parameters(body)
    _check_choices(body)
    stream = streaming(body)
    options = body.get("stream_options") or {}
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    said = read_conversation(body.get("messages"), limits or RequestLimits())
    return ChatAsk(
        model, said.question, said.history, session_of(body), stream, include_usage, not_applied,
        chat_tools(body), said.exchange,
    )  # fmt: skip


def streaming(body: dict[str, Any]) -> bool:
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise bad_request("stream must be true or false", "stream")
    return stream


def _check_choices(body: dict[str, Any]) -> None:
    if body.get("n") not in (None, 1):
        raise bad_request("only one choice is made: n must be 1", "n")
    response_format = body.get("response_format")
    if response_format and not (isinstance(response_format, dict) and response_format.get("type") == "text"):
        raise bad_request("response_format is not supported: the answer is text", "response_format")


def session_of(body: dict[str, Any]) -> str | None:
    """The session a request continues: its ``session`` field, else one per ``user``; None for a
    temporary session of its own."""
    session = body.get("session")
    if session is not None:
        if not isinstance(session, str):
            raise bad_request("session must be a string", "session")
        try:
            check_session_id(session)
        except UsageError as error:
            raise bad_request(str(error), "session") from None
        return session
    user = body.get("user")
    return user_session(user) if isinstance(user, str) and user else None


def user_session(user: str) -> str:
    """``user-<user>``; a user name that is no session id as it is (``alice@example.com``) is cleaned
    and marked with a hash of its own, so two users never share a session."""
    cleaned = "".join(c if c.isalnum() or c in "_-." else "_" for c in user)[:96]
    if cleaned == user:
        return f"user-{user}"
    return f"user-{cleaned}-{hashlib.sha256(user.encode()).hexdigest()[:12]}"


def usage_fields(usage: Usage) -> dict[str, Any]:
    """A turn's usage as OpenAI reports it (every agent's calls, summed)."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


@dataclass(frozen=True)
class Reply:
    """The frame every object of one response shares: its id, model and creation time."""

    id: str
    model: str
    created: int

    @classmethod
    def new(cls, model: str, run_id: str) -> Reply:
        return cls(f"chatcmpl-{run_id}", model, int(time.time()))

    def completion(
        self,
        content: str | None,
        reasoning: str,
        usage: Usage,
        extra: dict[str, Any],
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The whole answer: its text, or (``tool_calls``) the calls of the client's tools it is."""
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if reasoning:
            message["reasoning_content"] = reasoning
        finish = "tool_calls" if tool_calls else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return {**self._head("chat.completion"), "choices": [choice], "usage": usage_fields(usage), **extra}

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**self._head("chat.completion.chunk"), "choices": [choice], **extra}

    def usage_chunk(self, usage: Usage) -> dict[str, Any]:
        """The last chunk when the client asked for usage (``stream_options.include_usage``)."""
        return {**self._head("chat.completion.chunk"), "choices": [], "usage": usage_fields(usage)}

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}


def sse(data: dict[str, Any]) -> bytes:
    """One server-sent event carrying ``data`` as JSON."""
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


SSE_DONE = b"data: [DONE]\n\n"
SSE_KEEPALIVE = b": keep-alive\n\n"

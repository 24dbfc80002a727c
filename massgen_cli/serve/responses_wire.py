"""A Responses API request (``POST /v1/responses``) as the turn it asks for: its parameters checked as
OpenAI checks them (an unknown one refused, each known one typed and ranged), ``input`` read as the
conversation, the question and the client's tool results (``responses_input``), ``tools`` as the
client's tools, and ``previous_response_id`` as the session and conversation of that response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from massgen_cli.serve.conversation import read_conversation
from massgen_cli.serve.parameters import check_ranges
from massgen_cli.serve.response_store import ResponseStore, StoredResponse
from massgen_cli.serve.responses_input import chat_messages
from massgen_cli.serve.tool_specs import responses_tools
from massgen_cli.serve.wire import ChatAsk, RequestLimits, bad_request, session_of, streaming

KNOWN = frozenset({
    "background", "context_management", "conversation", "include", "input", "instructions",
    "max_output_tokens", "max_tool_calls", "metadata", "model", "parallel_tool_calls", "previous_response_id",
    "prompt", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning",
    "safety_identifier", "service_tier", "store", "stream", "stream_options", "temperature", "text",
    "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user", "moderation", "image",
    "access_programs", "background_options",
})  # fmt: skip
"""The request parameters of the Responses API (``openai``'s ``ResponseCreateParams``)."""
OURS = frozenset({"session"})
NOT_APPLIED = (
    "temperature", "top_p", "max_output_tokens", "max_tool_calls", "reasoning", "metadata",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "safety_identifier",
    "service_tier", "truncation", "parallel_tool_calls", "tool_choice", "include", "context_management",
    "moderation", "text",
)  # fmt: skip
"""Accepted and left to the config's own models (a team is not one sampled model)."""
REFUSED = {
    "background": "background responses are not available: ask with stream, or wait for the answer",
    "conversation": "conversations are not available: continue with previous_response_id or session",
    "prompt": "stored prompts are not available: give the input",
    "top_logprobs": "log probabilities are not available: a team's answer is no one model's sample",
    "image": "image output is not available: the answer is text",
}
ECHOED = ("instructions", "metadata", "temperature", "top_p", "max_output_tokens", "previous_response_id",
          "parallel_tool_calls", "tool_choice", "tools", "user", "store")  # fmt: skip
"""What a response says back of its request, as OpenAI's do."""


@dataclass(frozen=True)
class ResponsesAsk:
    """The turn a Responses request asks for (``ask``), what its response says back of it (``echo``),
    and the conversation it read (``messages``: kept with the answer for ``previous_response_id``)."""

    ask: ChatAsk
    echo: dict[str, Any] = field(default_factory=dict)
    messages: tuple[dict[str, Any], ...] = ()
    store: bool = True


def read_responses(
    body: Any, store: ResponseStore, owner: str | None, limits: RequestLimits | None = None
) -> ResponsesAsk:
    """``body`` as a ``ResponsesAsk``; an ``ApiError`` (400) naming what is wrong."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("you must provide a model parameter", "model")
    not_applied = _check(body)
    earlier = _previous(body, store, owner)
    messages = [*(earlier.messages if earlier else ()), *chat_messages(body.get("input"))]
    said = read_conversation(messages, limits or RequestLimits(), "input")
    session = session_of(body) or (earlier.session_id if earlier else None)
    stream = streaming(body)
    ask = ChatAsk(
        model, said.question, said.history, session, stream, False, not_applied, responses_tools(body),
        said.exchange,
    )  # fmt: skip
    echo = {name: body[name] for name in ECHOED if body.get(name) is not None}
    return ResponsesAsk(ask, echo, tuple(messages), body.get("store") is not False)


def _check(body: dict[str, Any]) -> tuple[str, ...]:
    unknown = sorted(set(body) - KNOWN - OURS)
    if unknown:
        raise bad_request(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    for name, why in REFUSED.items():
        if body.get(name):
            raise bad_request(why, name)
    check_ranges(body, counts=("max_output_tokens", "max_tool_calls"))
    text = body.get("text")
    text_format = text.get("format") if isinstance(text, dict) else None
    if text is not None and not isinstance(text, dict):
        raise bad_request("Invalid type for 'text': expected an object.", "text")
    if text_format is not None and not (isinstance(text_format, dict) and text_format.get("type") == "text"):
        raise bad_request("text.format must be text: the answer is text", "text.format")
    if body.get("stream_options") is not None and body.get("stream") is not True:
        raise bad_request(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
        )
    return tuple(name for name in NOT_APPLIED if body.get(name) is not None)


def _previous(body: dict[str, Any], store: ResponseStore, owner: str | None) -> StoredResponse | None:
    given = body.get("previous_response_id")
    if given is None:
        return None
    found = store.get(owner, given) if isinstance(given, str) else None
    if found is None:
        raise bad_request(
            f"Previous response with id '{given}' not found.",
            "previous_response_id",
            "previous_response_not_found",
        )
    return found

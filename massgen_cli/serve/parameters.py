"""A Chat Completions request's parameters checked as OpenAI checks them: an unknown one is refused, each
known one has its type and range, ``stream_options`` needs ``stream``; what the team cannot do (log
probabilities, audio) is refused rather than ignored. Sampling settings are left to the config's models
and named in the reply's ``massgen_metadata.parameters_not_applied``."""

from __future__ import annotations

import math
from typing import Any

from massgen_cli.serve.wire import bad_request

KNOWN = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model", "moderation", "n",
    "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})  # fmt: skip
"""The request parameters of OpenAI's Chat Completions (``openai``'s ``CompletionCreateParams``)."""
OURS = frozenset({"session"})
"""This server's own: the session a request continues."""
RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0), "presence_penalty": (-2.0, 2.0),
          "frequency_penalty": (-2.0, 2.0)}  # fmt: skip
COUNTS = ("max_tokens", "max_completion_tokens")
NOT_APPLIED = (
    "temperature", "top_p", "presence_penalty", "frequency_penalty", "max_tokens", "max_completion_tokens",
    "seed", "stop", "reasoning_effort", "verbosity", "logit_bias", "service_tier", "metadata", "store",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "safety_identifier", "moderation",
    "parallel_tool_calls", "tool_choice", "prediction", "web_search_options",
)  # fmt: skip
"""Accepted and left to the config's own models and settings (a team is not one sampled model)."""


def check_parameters(body: dict[str, Any]) -> tuple[str, ...]:
    """Refuse (400, naming ``param``) what OpenAI refuses and what the team cannot do; the parameters
    given that are accepted but not applied."""
    unknown = sorted(set(body) - KNOWN - OURS)
    if unknown:
        raise bad_request(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    check_ranges(body)
    _seed_and_stop(body)
    _stream_options(body)
    _what_the_team_cannot(body)
    return tuple(name for name in NOT_APPLIED if body.get(name) is not None)


def check_ranges(body: dict[str, Any], counts: tuple[str, ...] = COUNTS) -> None:
    """The sampling numbers typed and in their ranges, and ``counts`` integers of at least 1."""
    for name, (low, high) in RANGES.items():
        _number(body, name, low, high)
    for name in counts:
        _count(body, name)


def _number(body: dict[str, Any], name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_request(
            f"Invalid type for '{name}': expected a decimal, but got {_kind(value)} instead.", name
        )
    if value < low:
        raise bad_request(
            f"{value} is less than the minimum of {low:g} - '{name}'", name, "decimal_below_min_value"
        )
    if value > high:
        raise bad_request(
            f"{value} is greater than the maximum of {high:g} - '{name}'", name, "decimal_above_max_value"
        )


def _count(body: dict[str, Any], name: str) -> None:
    value = body.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(
            f"Invalid type for '{name}': expected an integer, but got {_kind(value)} instead.", name
        )
    if value < 1:
        raise bad_request(
            f"{value} is less than the minimum of 1 - '{name}'", name, "integer_below_min_value"
        )


def _seed_and_stop(body: dict[str, Any]) -> None:
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise bad_request(
            f"Invalid type for 'seed': expected an integer, but got {_kind(seed)} instead.", "seed"
        )
    stop = body.get("stop")
    if stop is None or isinstance(stop, str):
        return
    if not isinstance(stop, list) or not all(isinstance(item, str) for item in stop):
        raise bad_request("Invalid type for 'stop': expected a string or an array of strings.", "stop")
    if len(stop) > 4:
        raise bad_request(f"Invalid 'stop': expected an array of at most 4 strings, got {len(stop)}.", "stop")


def _stream_options(body: dict[str, Any]) -> None:
    options = body.get("stream_options")
    if options is None:
        return
    if body.get("stream") is not True:
        raise bad_request(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
        )
    if not isinstance(options, dict):
        raise bad_request("Invalid type for 'stream_options': expected an object.", "stream_options")
    for key, value in options.items():
        if key not in ("include_usage", "include_obfuscation"):
            raise bad_request(
                f"Unrecognized request argument supplied: stream_options.{key}", f"stream_options.{key}"
            )
        if not isinstance(value, bool):
            raise bad_request(
                f"Invalid type for 'stream_options.{key}': expected a boolean.", f"stream_options.{key}"
            )


def _what_the_team_cannot(body: dict[str, Any]) -> None:
    if body.get("logprobs") or body.get("top_logprobs") is not None:
        name = "logprobs" if body.get("logprobs") else "top_logprobs"
        raise bad_request(
            "log probabilities are not available: a team's answer is no one model's sample", name
        )
    modalities = body.get("modalities")
    if modalities is not None and modalities != ["text"]:
        raise bad_request('only the text modality is available: modalities must be ["text"]', "modalities")
    if body.get("audio") is not None:
        raise bad_request("audio output is not available: the answer is text", "audio")


def _kind(value: Any) -> str:
    return {str: "a string", list: "an array", dict: "an object", bool: "a boolean"}.get(
        type(value), "a value"
    )

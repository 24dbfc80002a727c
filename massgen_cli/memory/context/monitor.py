"""The context monitor: counts exactly what a request sends, each message once."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.messages import Message
from massgen_cli.tokens import (
    TOKENS_PER_MESSAGE,
    TOKENS_PER_REPLY,
    attachment_tokens,
    character_estimate,
    count_one_message,
    count_text_tokens,
    estimate_one_message,
)

CACHE_LIMIT = 20_000


@dataclass(frozen=True)
class ContextUsage:
    """Tokens a request uses against the model's window."""

    tokens: int
    window: int
    tool_tokens: int = 0
    """Of ``tokens``, those of tool calls, tool results and tool definitions."""
    estimated: bool = False
    """Counted at about four characters a token (the token encoding was not needed, so not loaded)."""

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window else 1.0


class ContextMonitor:
    """Token counts for one model; a message's count is cached by its content, so it is counted once."""

    def __init__(self, model: str | None, window: int, *, trigger_threshold: float, target_ratio: float):
        self.model = model
        self.window = window
        self.trigger_threshold = trigger_threshold
        self.target_ratio = target_ratio
        self._cache: dict[Hashable, int] = {}
        self.counted = 0

    @property
    def trigger_tokens(self) -> int:
        return int(self.window * self.trigger_threshold)

    @property
    def target_tokens(self) -> int:
        return int(self.window * self.target_ratio)

    def message_tokens(self, message: Message) -> int:
        return self._counted(_message_key(message), lambda: count_one_message(message, self.model))

    def _counted(self, key: Hashable, count: Callable[[], int]) -> int:
        """``count()`` once per distinct ``key`` (a message, or a set of tool schemas)."""
        cached = self._cache.get(key)
        if cached is None:
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            cached = self._cache[key] = count()
            self.counted += 1
        return cached

    def messages_tokens(self, messages: Sequence[Message]) -> int:
        return self._sums(messages)[0]

    def tools_tokens(self, tools: Sequence[ToolSpec] = (), schema: dict[str, Any] | None = None) -> int:
        text = _definitions_text(tools, schema)
        return self._counted(f"tools:{text}", lambda: count_text_tokens(text, self.model)) if text else 0

    def usage(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        schema: dict[str, Any] | None = None,
    ) -> ContextUsage:
        """Tokens of the whole request: messages, the reply priming, and tool schemas."""
        definitions = self.tools_tokens(tools, schema)
        total, exchanges = self._sums(messages)
        return ContextUsage(total + TOKENS_PER_REPLY + definitions, self.window, exchanges + definitions)

    def estimate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        schema: dict[str, Any] | None = None,
    ) -> ContextUsage:
        """``usage`` without the token encoding: messages counted before by their count, the others (and
        the tool definitions) at about four characters a token."""
        definitions = character_estimate(_definitions_text(tools, schema))
        total, exchanges = self._sums(messages, self._known_or_estimated)
        tokens = total + TOKENS_PER_REPLY + definitions
        return ContextUsage(tokens, self.window, exchanges + definitions, estimated=True)

    def _known_or_estimated(self, message: Message) -> int:
        known = self._cache.get(_message_key(message))
        return known if known is not None else estimate_one_message(message)

    def _sums(
        self, messages: Sequence[Message], count: Callable[[Message], int] | None = None
    ) -> tuple[int, int]:
        """Tokens of the messages, and of those that are tool exchanges."""
        count = count or self.message_tokens
        total = exchanges = 0
        for message in messages:
            tokens = count(message)
            total += tokens
            if message.get("role") == "tool" or message.get("tool_calls"):
                exchanges += tokens
        return total, exchanges

    def upper_bound(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        schema: dict[str, Any] | None = None,
    ) -> int:
        """At least ``usage(...).tokens``, known without the token encoding: the count of each message
        counted before, and for the others their JSON's bytes (a token is at least one byte, and the JSON
        holds every byte that is counted; escapes only add bytes)."""
        total = TOKENS_PER_REPLY
        for message in messages:
            known = self._cache.get(_message_key(message))
            total += known if known is not None else _byte_bound(message)
        if tools or schema:
            total += len(json.dumps(_specs(tools)).encode()) + len(json.dumps(schema).encode())
        return total

    def over_trigger(self, usage: ContextUsage) -> bool:
        return usage.tokens > self.trigger_tokens


def _specs(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


def _definitions_text(tools: Sequence[ToolSpec], schema: dict[str, Any] | None) -> str:
    specs = _specs(tools)
    text = json.dumps(specs, sort_keys=True) if specs else ""
    return text + (json.dumps(schema, sort_keys=True) if schema else "")


def _byte_bound(message: Message) -> int:
    """At least the message's count: its JSON's bytes (an attachment is its placeholder there) and what
    its attachments are estimated at."""
    encoded = json.dumps(message, sort_keys=True, default=str).encode()
    return len(encoded) + TOKENS_PER_MESSAGE + attachment_tokens(message)


def _message_key(message: Message) -> Hashable:
    """What a message's count depends on. Text content is part of the key as the string itself: Python
    keeps a string's hash, so finding a message counted before costs the same at any length (hashing
    the whole message each time made every count grow with the history)."""
    content = message.get("content")
    if len(message) == 2 and isinstance(content, str) and "role" in message:  # the common case, cheaply
        return (content, message["role"])
    rest = json.dumps({k: v for k, v in message.items() if k != "content"}, sort_keys=True, default=str)
    if content is None or isinstance(content, str):
        return (content, rest)
    return (json.dumps(content, sort_keys=True, default=str), rest)

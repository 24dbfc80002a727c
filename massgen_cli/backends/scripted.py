"""The scripted backend: deterministic responses from YAML, for tests and demos.

Each call consumes one entry (the last one repeats), whether it completes, is cancelled or fails.
A tool call in an entry (``tool``, and more in ``calls``) is sent only when the request offers that tool;
otherwise its text (or its ``content`` argument) comes back as plain text, or, for a request with a JSON
schema and no tools, as the JSON action (``call_tool`` for a tool that is not a decision). Every request
is kept in ``requests``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator
from typing import Any

from massgen_cli.backends.base import EVERY_KIND, TEXT_ONLY, Capabilities, Request
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.scripted import ScriptEntry
from massgen_cli.errors import BackendTimeoutError, ContextLengthError, RateLimitError, ServerError
from massgen_cli.events import Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCall, Usage
from massgen_cli.messages import content_text
from massgen_cli.tokens import count_message_tokens, count_text_tokens

STREAM_CHUNK_WORDS = 3


class ScriptedBackend:
    """Plays back ``responses`` entries, one per call."""

    def __init__(self, config: BackendConfig):
        kinds = EVERY_KIND if config.scripted_attachments else TEXT_ONLY
        self.capabilities = Capabilities(
            tool_calls=config.scripted_tool_calls, json_schema=True, reasoning=True, attachments=kinds
        )
        self.name = "scripted"
        self.model = config.model or "scripted"
        self.entries: list[ScriptEntry] = list(config.responses)
        self.requests: list[Request] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        entry = self.entries[min(len(self.requests), len(self.entries) - 1)]
        self.requests.append(request)
        return self._play(entry, request)

    async def _play(self, entry: ScriptEntry, request: Request) -> AsyncGenerator[StreamEvent, None]:
        if entry.error is not None:
            await asyncio.sleep(entry.delay)
            raise _fault(entry.error)
        if entry.reasoning:
            yield ReasoningDelta(entry.reasoning)
        text = entry.text or ""
        if entry.echo is not None:
            text = (text or "{echo}").replace("{echo}", _first_match(entry.echo, request))
        calls = [(entry.tool, entry.args)] if entry.tool is not None else []
        calls += [(call.tool, call.args) for call in entry.calls]
        sent = [(tool, args) for tool, args in calls if request.offers_tool(tool)]
        if calls and not sent:
            text = text or str(calls[0][1].get("content", ""))
        if calls and request.response_schema is not None and not request.tools:
            text = json.dumps(_json_action(*calls[0]))
        for chunk in _chunks(text):
            yield TextDelta(chunk)
        await asyncio.sleep(entry.delay)
        for number, (tool, args) in enumerate(sent):
            call_id = f"call_{len(self.requests)}" + (f"_{number}" if number else "")
            yield ToolCall(id=call_id, name=tool, arguments=dict(args))
        output = text + "".join(json.dumps(args) for _, args in sent)
        yield Usage(count_message_tokens(request.messages, self.model), count_text_tokens(output, self.model))
        yield Finish("tool_calls" if sent else "stop")

    async def aclose(self) -> None:
        return None


def _first_match(pattern: str, request: Request) -> str:
    """The first match of ``pattern`` in the request's messages, newest first."""
    for message in reversed(request.messages):
        found = re.search(pattern, content_text(message.get("content")))
        if found:
            return found.group(0)
    return "(not found in what I was sent)"


def _json_action(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool call as the JSON reply of a model without tool calls: a decision, or a ``call_tool``."""
    if tool in ("new_answer", "vote", "answer"):
        return {"action": tool, **args}
    return {"action": "call_tool", "tool": tool, "arguments": args}


def _chunks(text: str) -> list[str]:
    words = text.split(" ")
    return [
        " ".join(words[i : i + STREAM_CHUNK_WORDS]) + (" " if i + STREAM_CHUNK_WORDS < len(words) else "")
        for i in range(0, len(words), STREAM_CHUNK_WORDS)
        if text
    ]


def _fault(kind: int | str) -> Exception:
    if kind == 429:
        return RateLimitError("scripted rate limit (HTTP 429)", provider="scripted", retry_after=0.0)
    if kind == 500:
        return ServerError("scripted server error (HTTP 500)", provider="scripted", status=500)
    if kind == "timeout":
        return BackendTimeoutError("scripted request timed out", provider="scripted")
    return ContextLengthError("scripted context length exceeded", provider="scripted", status=400)

"""Gemini's streamed response (``GenerateContentResponse`` chunks) as our events: text, thought summaries
as reasoning, function calls, the searches (grounding) and code runs Gemini did itself as server tool
uses, usage, the finish, and the model turn kept for the next request when Gemini needs it back."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from google.genai import types

from massgen_cli.backends.gemini_contents import REPLAY
from massgen_cli.backends.provider_errors import clip
from massgen_cli.errors import BackendError, ConnectionFailedError
from massgen_cli.events import (
    Finish,
    ReasoningDelta,
    ReasoningState,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)

FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}
FILTERED = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"})
SHOWN_SOURCES = 3
KEPT_PARTS = ("thought_signature", "tool_call", "tool_response", "executable_code", "code_execution_result")
"""What makes a model turn worth sending back as it came (else our message says the same)."""


class GeminiAssembly:
    """Reads one response's chunks; ``received`` counts them (none: Gemini never answered)."""

    def __init__(self, provider: str):
        self.provider = provider
        self.received = 0
        self.parts: list[types.Part] = []
        self.calls = 0
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.queries: list[str] = []
        self.sources: dict[str, str] = {}
        self.code: list[types.Part] = []
        self.runs = 0

    async def events(
        self, chunks: AsyncIterator[types.GenerateContentResponse]
    ) -> AsyncIterator[StreamEvent]:
        async for chunk in chunks:
            self.received += 1
            for event in self._chunk(chunk):
                yield event
        if self.finish is None:
            raise ConnectionFailedError(
                f"the stream from {self.provider} ended before the response was complete",
                provider=self.provider,
            )
        if self.queries or self.sources:
            yield self._search()
        if any(getattr(part, name) for part in self.parts for name in KEPT_PARTS):
            yield ReasoningState({"type": REPLAY, "parts": [_as_json(p) for p in merged(self.parts)]})
        if self.usage is not None:
            yield self.usage
        yield Finish("tool_calls" if self.calls and self.finish == "stop" else self.finish)

    def _chunk(self, chunk: types.GenerateContentResponse) -> list[StreamEvent]:
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            why = clip(feedback.block_reason_message or str(feedback.block_reason.value))
            raise BackendError(f"{self.provider} refused the request ({why})", provider=self.provider)
        if chunk.usage_metadata is not None:
            self.usage = _usage(chunk.usage_metadata)  # each chunk reports the response so far
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        events = [event for part in _parts(candidate) for event in self._part(part)]
        if candidate.grounding_metadata is not None:
            self._grounding(candidate.grounding_metadata)
        if candidate.finish_reason is not None:
            self.finish = _finish_reason(candidate.finish_reason)
        return events

    def _part(self, part: types.Part) -> list[StreamEvent]:
        self.parts.append(part)
        if part.function_call is not None:
            return [self._call(part.function_call)]
        if part.executable_code is not None:
            self.code.append(part)
        elif part.code_execution_result is not None:
            return [self._code_run(part.code_execution_result)]
        elif part.text:
            return [ReasoningDelta(part.text) if part.thought else TextDelta(part.text)]
        return []

    def _call(self, call: types.FunctionCall) -> ToolCall:
        """Our call for Gemini's; a call without an id gets one (kept in the turn sent back)."""
        self.calls += 1
        call.id = call.id or f"call_{uuid.uuid4().hex[:16]}"
        return ToolCall(id=call.id, name=call.name or "", arguments=dict(call.args or {}))

    def _code_run(self, result: types.CodeExecutionResult) -> ServerToolUse:
        """The code Gemini ran (the part its result names, else the oldest not yet reported) and what
        came of it."""
        ran = next((p for p in self.code if p.executable_code and p.executable_code.id == result.id), None)
        ran = ran or (self.code[0] if self.code else None)
        if ran is not None:
            self.code.remove(ran)
        code = ran.executable_code if ran is not None else None
        self.runs += 1
        arguments = {"code": code.code or ""} if code is not None else {}
        outcome = result.outcome.value if result.outcome is not None else "OUTCOME_OK"
        output = (result.output or "").strip()
        summary = clip(output.splitlines()[0]) if output else outcome.removeprefix("OUTCOME_").lower()
        call_id = result.id or f"code_execution_{self.runs}"
        return ServerToolUse(call_id, "code_execution", arguments, summary, outcome == "OUTCOME_OK")

    def _grounding(self, grounding: types.GroundingMetadata) -> None:
        for query in grounding.web_search_queries or ():
            if query.strip() and query.strip() not in self.queries:
                self.queries.append(query.strip())
        for chunk in grounding.grounding_chunks or ():
            if chunk.web is not None and chunk.web.uri:
                self.sources[chunk.web.uri] = chunk.web.title or chunk.web.domain or chunk.web.uri

    def _search(self) -> ServerToolUse:
        """Google Search as Gemini grounded the response on it: the queries, and the sources it cites."""
        found = [f"{title} ({uri})" for uri, title in self.sources.items()]
        summary = f"{len(found)} source(s): " + "; ".join(found[:SHOWN_SOURCES]) if found else "no sources"
        return ServerToolUse("google_search", "google_search", {"queries": self.queries}, clip(summary))


def _parts(candidate: types.Candidate) -> list[types.Part]:
    return list(candidate.content.parts or ()) if candidate.content is not None else []


def _finish_reason(reason: types.FinishReason) -> str:
    name = str(reason.value)
    if name in FILTERED:
        return "content_filter"
    return FINISH_REASONS.get(name, name.lower())


def _usage(reported: types.GenerateContentResponseUsageMetadata) -> Usage:
    """Tokens as Gemini counts them: the prompt with the tool results it read (search results), the reply
    with its thinking; the cache reads within the prompt."""
    prompt = (reported.prompt_token_count or 0) + (reported.tool_use_prompt_token_count or 0)
    thoughts = reported.thoughts_token_count or 0
    output = (reported.candidates_token_count or 0) + thoughts
    return Usage(
        prompt, output, cached_tokens=reported.cached_content_token_count or 0, reasoning_tokens=thoughts
    )


def merged(parts: list[types.Part]) -> list[types.Part]:
    """The turn's parts as one reply: the streamed pieces of a text (or thought) joined, up to the piece
    that carries a thought signature, which the joined part keeps."""
    joined: list[types.Part] = []
    for part in parts:
        if joined and _continues(joined[-1], part):
            text = (joined[-1].text or "") + (part.text or "")
            update = {"text": text, "thought_signature": part.thought_signature}
            joined[-1] = joined[-1].model_copy(update=update)
        else:
            joined.append(part)
    return joined


def _continues(last: types.Part, part: types.Part) -> bool:
    """Whether ``part`` is the next piece of the text ``last`` (not yet closed by a signature)."""
    same_kind = bool(last.thought) == bool(part.thought)
    return same_kind and not last.thought_signature and _plain(last) and _plain(part)


def _plain(part: types.Part) -> bool:
    return part.text is not None and set(part.model_dump(exclude_none=True)) <= {
        "text",
        "thought",
        "thought_signature",
    }


def _as_json(part: types.Part) -> dict[str, Any]:
    return part.model_dump(mode="json", exclude_none=True)

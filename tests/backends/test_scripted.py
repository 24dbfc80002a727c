"""The scripted backend's rules, as DESIGN.md states them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from massgen_cli.backends.base import Request, ToolSpec, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.backends.retry import RetryingBackend
from massgen_cli.backends.scripted import ScriptedBackend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import BackendTimeoutError, ContextLengthError, RateLimitError, ServerError
from massgen_cli.events import StreamEvent, TextDelta, ToolCall

VOTE_TOOL = ToolSpec("vote", "vote", {"type": "object"})
ANSWER_TOOL = ToolSpec("new_answer", "answer", {"type": "object"})
ASK = [{"role": "user", "content": "Q?"}]


def scripted(*responses) -> ScriptedBackend:  # type: ignore[no-untyped-def]
    return ScriptedBackend(BackendConfig(type="scripted", responses=list(responses)))


async def test_entries_in_order_and_the_last_repeats():
    backend = scripted("one", "two")
    texts = [(await complete(backend, Request(ASK))).text for _ in range(4)]
    assert texts == ["one", "two", "two", "two"]
    assert backend.calls == 4


async def test_text_streams_in_several_deltas():
    backend = scripted("a b c d e f g")
    events = [event async for event in backend.stream(Request(ASK))]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "a b c d e f g"


async def test_tool_call_only_when_offered():
    entry = {"tool": "new_answer", "args": {"content": "my answer"}}
    offered = await complete(scripted(entry), Request(ASK, tools=(ANSWER_TOOL,)))
    assert offered.tool_calls == [ToolCall("call_1", "new_answer", {"content": "my answer"})]
    not_offered = await complete(scripted(entry), Request(ASK, tools=(VOTE_TOOL,)))
    assert not_offered.tool_calls == [] and not_offered.text == "my answer"


async def test_text_then_tool_call():
    entry = {"text": "thinking", "tool": "vote", "args": {"agent_id": "agent1", "reason": "r"}}
    result = await complete(scripted(entry), Request(ASK, tools=(VOTE_TOOL,)))
    assert result.text == "thinking" and result.tool_calls[0].name == "vote"
    assert result.finish_reason == "tool_calls"


async def test_json_schema_request_gets_the_decision_as_json():
    entry = {"tool": "vote", "args": {"agent_id": "agent1", "reason": "r"}}
    result = await complete(scripted(entry), Request(ASK, response_schema={"type": "object"}))
    assert result.text == '{"action": "vote", "agent_id": "agent1", "reason": "r"}'


async def test_a_cancelled_call_still_consumes_its_entry():
    backend = scripted({"text": "slow", "delay": 10}, "fast")
    task = asyncio.create_task(complete(backend, Request(ASK)))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await complete(backend, Request(ASK))).text == "fast"


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (429, RateLimitError),
        (500, ServerError),
        ("timeout", BackendTimeoutError),
        ("context_length", ContextLengthError),
    ],
)
async def test_faults(fault, error):
    with pytest.raises(error):
        await complete(scripted({"error": fault}), Request(ASK))


async def test_retry_consumes_the_next_entry_and_reports():
    heard = []
    backend = RetryingBackend(
        scripted({"error": 429}, {"error": 500}, "ok"),
        max_retries=3,
        base_delay=0,
        on_retry=lambda *a: heard.append(a),
    )
    assert (await complete(backend, Request(ASK))).text == "ok"
    assert [attempt for _, attempt, _ in heard] == [1, 2]


class KeepsStreams(ScriptedBackend):
    """A scripted backend that keeps every stream it hands out, to look at them afterwards."""

    def __init__(self, *responses: str):
        super().__init__(BackendConfig(type="scripted", responses=list(responses)))
        self.streams: list[AsyncIterator[StreamEvent]] = []

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.streams.append(super().stream(request))
        return self.streams[-1]


async def test_stopping_early_closes_the_inner_stream():
    inner = KeepsStreams("a b c d e f")
    outer = RetryingBackend(inner, max_retries=1, base_delay=0).stream(Request(ASK))

    async with contextlib.aclosing(outer) as events:
        async for _ in events:
            break

    assert inner.streams[0].ag_frame is None  # type: ignore[attr-defined]


async def test_context_length_is_not_retried():
    inner = scripted({"error": "context_length"}, "ok")
    with pytest.raises(ContextLengthError):
        await complete(RetryingBackend(inner, max_retries=3, base_delay=0), Request(ASK))
    assert inner.calls == 1


async def test_usage_is_counted():
    result = await complete(scripted("Paris is the capital of France."), Request(ASK))
    assert result.usage.input_tokens > 0 and result.usage.output_tokens >= 7


def test_registry_builds_scripted_wrapped_in_retries():
    backend = create_backend(BackendConfig(type="scripted", responses=["x"]))
    assert isinstance(backend, RetryingBackend) and isinstance(backend.inner, ScriptedBackend)

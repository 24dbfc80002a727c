"""The Chat Completions backend against a real HTTP server speaking OpenAI's wire format."""

from __future__ import annotations

import json
import socket

import pytest

from massgen_cli.backends.base import Request, ToolSpec, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.backends.retry import RetryingBackend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import calls_openai_itself
from massgen_cli.errors import (
    BackendError,
    BackendTimeoutError,
    ConnectionFailedError,
    ContextLengthError,
    MissingAPIKeyError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import Finish, ReasoningDelta, TextDelta, ToolCall, Usage
from tests.servers.fake_providers import Reply, collect, collect_until_error, openai_error, openai_stream

ASK = Request(messages=[{"role": "user", "content": "What is 2 + 2?"}])
VOTE = ToolSpec(
    "vote",
    "Vote for the best answer.",
    {"type": "object", "properties": {"agent_id": {"type": "string"}}, "required": ["agent_id"]},
)
NEW_ANSWER = ToolSpec("new_answer", "Give a new answer.", {"type": "object", "properties": {"content": {}}})


def retrying(
    backend, delays: list[float], errors: list[BackendError], max_retries: int = 3
) -> RetryingBackend:
    def on_retry(error: BackendError, attempt: int, delay: float) -> None:
        errors.append(error)
        delays.append(delay)

    return RetryingBackend(backend, max_retries=max_retries, base_delay=0.001, on_retry=on_retry)


async def test_streams_reasoning_text_usage_and_finish(fake_server, make_openai):
    fake_server.script(openai_stream("The answer is 4.", reasoning="Two plus two.", usage=(21, 5)))

    events = await collect(make_openai(), ASK)

    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Two ", "plus ", "two."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["The ", "answer ", "is ", "4."]
    assert events[-2:] == [Usage(21, 5), Finish("stop")]


async def test_sends_messages_unchanged_with_streaming_options(fake_server, make_openai):
    messages = [
        {"role": "system", "content": "You are agent_a."},
        {"role": "user", "content": "Pick the best answer."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "vote", "arguments": '{"agent_id": "b"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Vote recorded."},
    ]
    fake_server.script(openai_stream("Done."))

    await complete(make_openai(), Request(messages=messages, tools=(VOTE,)))

    sent = fake_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["messages"] == messages
    assert sent.body["model"] == "fake-model"
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["tools"] == [
        {
            "type": "function",
            "function": {"name": "vote", "description": VOTE.description, "parameters": VOTE.parameters},
        }
    ]
    assert "response_format" not in sent.body
    assert sent.headers["authorization"] == "Bearer sk-test-key"


async def test_a_request_carries_one_system_message_and_tool_results_without_their_name(
    fake_server, make_openai
):
    """A tool result's ``name`` is ours (Gemini's function responses need it), not Chat Completions'; the
    context blocks after the system prompt and a compression's summary go in the one system message."""
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "You are agent_a."},
        {"role": "system", "content": "Relevant memories:\n- the pier is number 3"},
        {"role": "system", "content": "=== TASK PLANS ===\n- [ ] check the pier"},
        {"role": "user", "content": "Which pier?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "pier 3"},
    ]
    fake_server.script(openai_stream("Pier 3."))

    await complete(make_openai(), Request(messages=messages, tools=(VOTE,)))

    sent = fake_server.requests[0].body["messages"]
    assert sent[0] == {
        "role": "system",
        "content": "You are agent_a.\n\nRelevant memories:\n- the pier is number 3\n\n"
        "=== TASK PLANS ===\n- [ ] check the pier",
    }
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "pier 3"}
    assert messages[5]["name"] == "read_file", "the caller's messages are left as they were"


async def test_assembles_tool_calls_streamed_in_fragments(fake_server, make_openai):
    calls = [
        ("call_a", "vote", '{"agent_id": "agent_b"}'),
        ("call_b", "new_answer", '{"content": "4, surely"}'),
    ]
    fake_server.script(openai_stream(tool_calls=calls))

    events = await collect(make_openai(), Request(ASK.messages, tools=(VOTE, NEW_ANSWER)))

    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall("call_a", "vote", {"agent_id": "agent_b"}),
        ToolCall("call_b", "new_answer", {"content": "4, surely"}),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_undecodable_tool_arguments_are_a_clear_error(fake_server, make_openai):
    fake_server.script(openai_stream(tool_calls=[("call_a", "vote", '{"agent_id": "agent_')]))

    with pytest.raises(BackendError, match="arguments for tool 'vote' that are not valid JSON"):
        await complete(make_openai(), Request(ASK.messages, tools=(VOTE,)))


async def test_response_schema_becomes_a_json_schema_response_format(fake_server, make_openai):
    schema = {
        "type": "object",
        "properties": {"action": {"enum": ["vote", "new_answer"]}},
        "required": ["action"],
    }
    fake_server.script(openai_stream('{"action": "vote"}'), openai_stream("Plain."))
    backend = make_openai()

    result = await complete(backend, Request(ASK.messages, response_schema=schema))
    await complete(backend, Request(ASK.messages, tools=(VOTE,), response_schema=schema))

    assert json.loads(result.text) == {"action": "vote"}
    assert fake_server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "decision", "schema": schema},
    }
    assert "response_format" not in fake_server.requests[1].body


async def test_sampling_options_and_extra_body_are_sent(fake_server, make_openai):
    fake_server.script(openai_stream("Hi."))
    backend = make_openai(
        temperature=0.3,
        max_tokens=64,
        top_p=0.9,
        top_k=40,
        repetition_penalty=1.1,
        chat_template_kwargs={"enable_thinking": False},
        extra_body={"min_p": 0.05},
    )

    await complete(backend, ASK)

    body = fake_server.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.3, 64, 0.9)
    assert (body["top_k"], body["repetition_penalty"], body["min_p"]) == (40, 1.1, 0.05)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


async def test_openai_itself_gets_max_completion_tokens(fake_server, make_openai, monkeypatch):
    """No base_url: OpenAI's own API (here at the address OPENAI_BASE_URL names, as a proxy in front of
    it would be), which refuses max_tokens for its reasoning models."""
    fake_server.stands_for["/v1/"] = "openai"
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake_server.root_url}/v1")
    fake_server.script(openai_stream("Hi."))

    await complete(make_openai(type="openai", model="o4-mini", base_url=None, max_tokens=64), ASK)

    body = fake_server.requests[0].body
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body and "temperature" not in body


@pytest.mark.parametrize(
    ("backend_type", "base_url", "openai_itself"),
    [
        ("openai", None, True),
        ("chatcompletion", "https://api.openai.com/v1", True),
        ("openai", "https://api.openai.com/v1/", True),
        ("azure_openai", "https://team.openai.azure.com", True),
        ("chatcompletion", "http://localhost:8000/v1", False),
        ("openai", "http://127.0.0.1:8080/v1", False),
        ("vllm", None, False),
        ("local", None, False),
        ("openrouter", None, False),
    ],
)
def test_which_servers_are_openai_itself(backend_type, base_url, openai_itself):
    assert calls_openai_itself(backend_type, base_url) is openai_itself


async def test_a_compatible_server_gets_max_tokens_whatever_the_type(fake_server, make_openai):
    fake_server.script(openai_stream("Hi."))

    await complete(make_openai(type="openai", model="gpt-5-mini", max_tokens=64), ASK)

    body = fake_server.requests[0].body
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body


async def test_keyless_server_gets_a_placeholder_key(fake_server, make_openai):
    fake_server.script(openai_stream("Hi."))

    await complete(make_openai(api_key=None), ASK)

    assert fake_server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_rate_limit_is_retried_after_the_servers_retry_after(fake_server, make_openai):
    fake_server.script(
        openai_error(429, "Slow down.", headers={"Retry-After": "0.2"}), openai_stream("Four.")
    )
    delays: list[float] = []
    errors: list[BackendError] = []

    result = await complete(retrying(make_openai(), delays, errors), ASK)

    assert result.text == "Four."
    assert len(fake_server.requests) == 2
    assert isinstance(errors[0], RateLimitError)
    assert errors[0].retry_after == 0.2
    assert delays[0] >= 0.2


async def test_server_error_is_typed_and_retried(fake_server, make_openai):
    fake_server.script(
        openai_error(500, "Internal error.", error_type="server_error"), openai_stream("Four.")
    )
    delays: list[float] = []
    errors: list[BackendError] = []

    result = await complete(retrying(make_openai(), delays, errors), ASK)

    assert result.text == "Four."
    assert len(fake_server.requests) == 2
    assert isinstance(errors[0], ServerError)
    assert errors[0].status == 500


async def test_stream_cut_after_text_is_not_retried(fake_server, make_openai):
    cut = openai_stream("The answer is four.")
    cut.cut_after = 3
    fake_server.script(cut, openai_stream("Never sent."))
    delays: list[float] = []
    errors: list[BackendError] = []

    events, error = await collect_until_error(retrying(make_openai(), delays, errors), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, ConnectionFailedError)
    assert "cut mid-response" in str(error)
    assert len(fake_server.requests) == 1
    assert errors == []


async def test_stream_that_ends_without_a_finish_is_incomplete(fake_server, make_openai):
    whole = openai_stream("The answer is four.")
    fake_server.script(Reply(frames=whole.frames[:3]))

    events, error = await collect_until_error(make_openai(), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, ConnectionFailedError)
    assert "ended before the response was complete" in str(error)


async def test_slow_server_times_out(fake_server, make_openai):
    fake_server.script(Reply(delay=3.0, frames=openai_stream("Too late.").frames))

    with pytest.raises(BackendTimeoutError, match=r"did not answer within 0\.3 s"):
        await complete(make_openai(request_timeout_seconds=0.3), ASK)


async def test_stream_that_stalls_after_text_times_out(fake_server, make_openai):
    stalled = openai_stream("The answer is four.")
    stalled.stall_after = 3
    fake_server.script(stalled)

    events, error = await collect_until_error(make_openai(request_timeout_seconds=0.3), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, BackendTimeoutError)


async def test_unreachable_server_is_a_connection_error(make_openai):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = make_openai(base_url=f"http://127.0.0.1:{port}/v1")

    with pytest.raises(
        ConnectionFailedError, match=r"the connection to chatcompletion at http://127\.0\.0\.1:\d+/v1/ failed"
    ):
        await complete(backend, ASK)


@pytest.mark.parametrize(
    "reply",
    [
        openai_error(
            400, "This model's maximum context length is 8192 tokens.", code="context_length_exceeded"
        ),
        openai_error(
            400,
            "request (2304 tokens) exceeds the available context size (2048 tokens)",
            code=400,
            error_type="exceed_context_size_error",
        ),
        openai_error(400, "This model's maximum context length is 4096 tokens. However, you requested 5000."),
    ],
    ids=["openai", "llama.cpp", "vllm"],
)
async def test_context_overflow_is_a_context_length_error(fake_server, make_openai, reply):
    fake_server.script(reply)

    with pytest.raises(ContextLengthError) as caught:
        await complete(make_openai(), ASK)

    assert caught.value.status == 400
    assert not caught.value.retryable


async def test_other_client_errors_are_one_clear_line(fake_server, make_openai):
    fake_server.script(
        openai_error(404, "The model 'fake-model' does not exist.\nCheck the name.", code="not_found")
    )

    with pytest.raises(BackendError) as caught:
        await complete(make_openai(), ASK)

    assert type(caught.value) is BackendError
    assert (
        str(caught.value)
        == "chatcompletion returned HTTP 404: The model 'fake-model' does not exist. Check the name."
    )


async def test_rejected_key_names_the_variable_to_check(fake_server, make_openai):
    fake_server.script(openai_error(401, "Incorrect API key provided.", code="invalid_api_key"))

    with pytest.raises(BackendError, match=r"rejected the API key.*OPENAI_API_KEY") as caught:
        await complete(make_openai(type="openai", model="gpt-4o-mini"), ASK)

    assert caught.value.status == 401


async def test_error_inside_the_stream_is_typed(fake_server, make_openai):
    error = {"error": {"message": "the prompt exceeds the context window", "type": "invalid_request_error"}}
    fake_server.script(Reply(frames=[f"data: {json.dumps(error)}\n\n"]))

    with pytest.raises(ContextLengthError, match="exceeds the context window"):
        await complete(make_openai(), ASK)


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        create_backend(BackendConfig(type="openai", model="gpt-4o-mini"))


async def test_registry_builds_a_working_backend(fake_server):
    fake_server.script(openai_stream("Hello from the registry."))
    config = BackendConfig(type="chatcompletion", model="fake-model", base_url=f"{fake_server.root_url}/v1")
    backend = create_backend(config)

    try:
        result = await complete(backend, ASK)
    finally:
        await backend.aclose()

    assert result.text == "Hello from the registry."
    assert (backend.name, backend.model, backend.capabilities.json_schema) == (
        "chatcompletion",
        "fake-model",
        True,
    )


def test_openrouter_is_told_by_its_type_or_its_address_and_an_own_web_plugin_is_kept():
    from massgen_cli.backends.openai_chat import openrouter_web_search

    pointed = BackendConfig(
        type="chatcompletion", model="m", base_url="https://openrouter.ai/api/v1", enable_web_search=True
    )
    assert openrouter_web_search(pointed, None) == {"plugins": [{"id": "web"}]}
    elsewhere = BackendConfig(
        type="chatcompletion", model="m", base_url="http://x/v1", enable_web_search=True
    )
    assert openrouter_web_search(elsewhere, None) == {}
    own = [{"id": "web", "engine": "native"}]
    assert openrouter_web_search(pointed, own) == {}, "the config's own web plugin stays as it is"
    assert openrouter_web_search(pointed, [{"id": "file-parser"}]) == {
        "plugins": [{"id": "file-parser"}, {"id": "web"}]
    }

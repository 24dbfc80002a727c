"""The Anthropic backend against a real HTTP server speaking the Messages API's wire format."""

from __future__ import annotations

import pytest

from massgen_cli.backends.anthropic_messages import to_anthropic_messages
from massgen_cli.backends.base import Request, ToolSpec, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.backends.retry import RetryingBackend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import (
    BackendError,
    BackendTimeoutError,
    ConnectionFailedError,
    ContextLengthError,
    MissingAPIKeyError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import Finish, ReasoningDelta, ServerToolUse, TextDelta, ToolCall, Usage
from tests.servers.fake_providers import (
    Reply,
    anthropic_error,
    anthropic_stream,
    collect,
    collect_until_error,
)

ASK = Request(messages=[{"role": "user", "content": "What is 2 + 2?"}])
VOTE = ToolSpec(
    "vote",
    "Vote for the best answer.",
    {"type": "object", "properties": {"agent_id": {"type": "string"}}, "required": ["agent_id"]},
)
CONVERSATION = [
    {"role": "system", "content": "You are agent_a."},
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Pick the best answer."},
    {"role": "user", "content": [{"type": "text", "text": "Answers are below."}]},
    {
        "role": "assistant",
        "content": "Voting now.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "vote", "arguments": '{"agent_id": "b"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "vote", "arguments": '{"agent_id": "c"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Vote recorded."},
    {"role": "tool", "tool_call_id": "call_2", "content": "Only one vote counts."},
    {"role": "user", "content": "Go on."},
]


def retrying(backend, delays: list[float], errors: list[BackendError]) -> RetryingBackend:
    def on_retry(error: BackendError, attempt: int, delay: float) -> None:
        errors.append(error)
        delays.append(delay)

    return RetryingBackend(backend, max_retries=3, base_delay=0.001, on_retry=on_retry)


async def test_streams_thinking_text_usage_and_finish(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("The answer is 4.", thinking="Two plus two.", usage=(30, 9)))

    events = await collect(make_anthropic(), ASK)

    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Two ", "plus ", "two."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["The ", "answer ", "is ", "4."]
    assert events[-2:] == [Usage(30, 9), Finish("stop")]


async def test_assembles_tool_use_from_input_json_deltas(fake_server, make_anthropic):
    uses = [("toolu_1", "vote", '{"agent_id": "agent_b"}'), ("toolu_2", "vote", '{"agent_id": "agent_c"}')]
    fake_server.script(anthropic_stream("Voting.", tool_uses=uses))

    events = await collect(make_anthropic(), Request(ASK.messages, tools=(VOTE,)))

    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall("toolu_1", "vote", {"agent_id": "agent_b"}),
        ToolCall("toolu_2", "vote", {"agent_id": "agent_c"}),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_undecodable_tool_input_is_a_clear_error(fake_server, make_anthropic):
    fake_server.script(anthropic_stream(tool_uses=[("toolu_1", "vote", '{"agent_id": ')]))

    with pytest.raises(BackendError, match="arguments for tool 'vote' that are not valid JSON"):
        await complete(make_anthropic(), Request(ASK.messages, tools=(VOTE,)))


async def test_max_tokens_stop_is_a_length_finish(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("The answer", stop_reason="max_tokens"))

    result = await complete(make_anthropic(), ASK)

    assert (result.text, result.finish_reason) == ("The answer", "length")


async def test_sends_converted_conversation_tools_and_defaults(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("Done."))

    await complete(make_anthropic(), Request(CONVERSATION, tools=(VOTE,)))

    sent = fake_server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.body["system"] == "You are agent_a.\n\nAnswer briefly."
    assert sent.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Pick the best answer."},
                {"type": "text", "text": "Answers are below."},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Voting now."},
                {"type": "tool_use", "id": "call_1", "name": "vote", "input": {"agent_id": "b"}},
                {"type": "tool_use", "id": "call_2", "name": "vote", "input": {"agent_id": "c"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "Vote recorded."},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "Only one vote counts."},
                {"type": "text", "text": "Go on."},
            ],
        },
    ]
    assert sent.body["tools"] == [
        {"name": "vote", "description": VOTE.description, "input_schema": VOTE.parameters}
    ]
    assert (sent.body["model"], sent.body["max_tokens"], sent.body["stream"]) == ("claude-fake", 4096, True)
    assert "temperature" not in sent.body


async def test_without_tools_earlier_tool_calls_and_results_are_sent_as_text(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("Done."))

    await complete(make_anthropic(), Request(CONVERSATION))

    body = fake_server.requests[0].body
    assert "tools" not in body
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Voting now."},
                {"type": "text", "text": '[called vote({"agent_id": "b"})]'},
                {"type": "text", "text": '[called vote({"agent_id": "c"})]'},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[result of vote: Vote recorded.]"},
                {"type": "text", "text": "[result of vote: Only one vote counts.]"},
                {"type": "text", "text": "Go on."},
            ],
        },
    ]


async def test_sampling_options_and_extra_body_are_sent(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("Hi."))
    backend = make_anthropic(
        max_tokens=256, temperature=0.2, top_p=0.8, top_k=20, extra_body={"metadata": {"user_id": "u-1"}}
    )

    await complete(backend, ASK)

    body = fake_server.requests[0].body
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["top_k"]) == (256, 0.2, 0.8, 20)
    assert body["metadata"] == {"user_id": "u-1"}


async def test_response_schema_becomes_a_system_instruction(fake_server, make_anthropic):
    schema = {"type": "object", "properties": {"action": {"enum": ["vote"]}}}
    fake_server.script(anthropic_stream('{"action": "vote"}'))
    backend = make_anthropic()

    await complete(backend, Request(CONVERSATION[:3], response_schema=schema))

    system = fake_server.requests[0].body["system"]
    assert system.startswith("You are agent_a.\n\nAnswer briefly.\n\nReply with one JSON object")
    assert '{"type":"object","properties":{"action":{"enum":["vote"]}}}' in system
    assert not backend.capabilities.json_schema
    assert backend.capabilities.tool_calls


async def test_key_reaches_the_server(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("Hi."))

    await complete(make_anthropic(), ASK)

    # anthropic 2.x sends the key as a bearer token, not as x-api-key.
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-test-key"
    assert "anthropic-version" in fake_server.requests[0].headers


async def test_rate_limit_is_retried_after_the_servers_retry_after(fake_server, make_anthropic):
    limited = anthropic_error(429, "rate_limit_error", "Too many requests.", headers={"retry-after": "0.2"})
    fake_server.script(limited, anthropic_stream("Four."))
    delays: list[float] = []
    errors: list[BackendError] = []

    result = await complete(retrying(make_anthropic(), delays, errors), ASK)

    assert result.text == "Four."
    assert len(fake_server.requests) == 2
    assert isinstance(errors[0], RateLimitError)
    assert errors[0].retry_after == 0.2
    assert delays[0] >= 0.2


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (anthropic_error(529, "overloaded_error", "Overloaded"), 529),
        (anthropic_error(500, "api_error", "Internal server error"), 500),
        (
            Reply(
                frames=['event: error\ndata: {"type": "error", "error": {"type": "overloaded_error"}}\n\n']
            ),
            None,
        ),
    ],
    ids=["529", "500", "error-event"],
)
async def test_server_errors_are_typed_and_retried(fake_server, make_anthropic, reply, status):
    fake_server.script(reply, anthropic_stream("Four."))
    delays: list[float] = []
    errors: list[BackendError] = []

    result = await complete(retrying(make_anthropic(), delays, errors), ASK)

    assert result.text == "Four."
    assert len(fake_server.requests) == 2
    assert isinstance(errors[0], ServerError)
    assert errors[0].status == status


async def test_stream_cut_after_text_is_not_retried(fake_server, make_anthropic):
    cut = anthropic_stream("The answer is four.")
    cut.cut_after = 5
    fake_server.script(cut, anthropic_stream("Never sent."))
    delays: list[float] = []
    errors: list[BackendError] = []

    events, error = await collect_until_error(retrying(make_anthropic(), delays, errors), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, ConnectionFailedError)
    assert "cut mid-response" in str(error)
    assert len(fake_server.requests) == 1
    assert errors == []


async def test_stream_that_ends_without_message_stop_is_incomplete(fake_server, make_anthropic):
    fake_server.script(Reply(frames=anthropic_stream("The answer is four.").frames[:5]))

    events, error = await collect_until_error(make_anthropic(), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, ConnectionFailedError)


async def test_slow_server_times_out(fake_server, make_anthropic):
    fake_server.script(Reply(delay=3.0, frames=anthropic_stream("Too late.").frames))

    with pytest.raises(BackendTimeoutError, match=r"did not answer within 0\.3 s"):
        await complete(make_anthropic(request_timeout_seconds=0.3), ASK)


async def test_stream_that_stalls_after_text_times_out(fake_server, make_anthropic):
    stalled = anthropic_stream("The answer is four.")
    stalled.stall_after = 5
    fake_server.script(stalled)

    events, error = await collect_until_error(make_anthropic(request_timeout_seconds=0.3), ASK)

    assert events == [TextDelta("The "), TextDelta("answer ")]
    assert isinstance(error, BackendTimeoutError)


async def test_prompt_too_long_is_a_context_length_error(fake_server, make_anthropic):
    too_long = anthropic_error(
        400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
    )
    fake_server.script(too_long)

    with pytest.raises(ContextLengthError, match="prompt is too long") as caught:
        await complete(make_anthropic(), ASK)

    assert caught.value.status == 400
    assert not caught.value.retryable


async def test_rejected_key_names_the_variable_to_check(fake_server, make_anthropic):
    fake_server.script(anthropic_error(401, "authentication_error", "invalid x-api-key"))

    with pytest.raises(BackendError, match=r"rejected the API key.*ANTHROPIC_API_KEY"):
        await complete(make_anthropic(), ASK)


async def test_other_client_errors_are_one_clear_line(fake_server, make_anthropic):
    fake_server.script(anthropic_error(404, "not_found_error", "model: claude-fake"))

    with pytest.raises(BackendError) as caught:
        await complete(make_anthropic(), ASK)

    assert type(caught.value) is BackendError
    assert str(caught.value) == "claude returned HTTP 404: model: claude-fake"


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        create_backend(BackendConfig(type="claude", model="claude-sonnet-4-5"))


async def test_registry_builds_a_working_backend(fake_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    fake_server.script(anthropic_stream("Hello from the registry."))
    backend = create_backend(BackendConfig(type="claude", model="claude-fake", base_url=fake_server.root_url))

    try:
        result = await complete(backend, ASK)
    finally:
        await backend.aclose()

    assert result.text == "Hello from the registry."
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_conversion_starts_a_new_turn_only_when_the_role_changes():
    system, messages = to_anthropic_messages(
        [
            {"role": "user", "content": "One."},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "Two."},
            {"role": "assistant", "content": "Three."},
        ]
    )

    assert system == ""
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"] == [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]


async def test_anthropic_web_search_and_code_execution_run_as_its_server_tools(fake_server, make_anthropic):
    search = {"type": "web_search_tool_result", "content": [{"type": "web_search_result", "title": "Paris",
              "url": "https://example.org/paris", "encrypted_content": "x"}]}  # fmt: skip
    code = {"type": "bash_code_execution_tool_result",
            "content": {"type": "bash_code_execution_result", "stdout": "2\n", "stderr": "", "return_code": 0,
                        "content": []}}  # fmt: skip
    fake_server.script(
        anthropic_stream(
            "Paris.",
            server_tools=[
                ("srv_1", "web_search", '{"query": "capital of France"}', search),
                ("srv_2", "bash_code_execution", '{"command": "echo 2"}', code),
            ],
        )
    )
    backend = make_anthropic(enable_web_search=True, enable_code_execution=True)
    events = await collect(backend, Request([{"role": "user", "content": "Capital of France?"}]))
    used = [(e.name, e.arguments, e.summary, e.ok) for e in events if isinstance(e, ServerToolUse)]
    assert used == [
        ("web_search", {"query": "capital of France"}, "1 result(s): Paris", True),
        ("bash_code_execution", {"command": "echo 2"}, "2", True),
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Paris."
    (sent,) = fake_server.requests
    assert {"type": "web_search_20250305", "name": "web_search"} in sent.body["tools"]
    assert {"type": "code_execution_20250825", "name": "code_execution"} in sent.body["tools"]
    assert "code-execution-2025-08-25" in sent.headers["anthropic-beta"]

"""The Responses API backend against a wire-format Responses server on 127.0.0.1, through the real
``openai`` SDK: text, reasoning summaries and their encrypted state, function calls and their outputs,
OpenAI's own web search and code interpreter, usage, errors, and a whole coordinated turn."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml

from massgen_cli.backends.base import Request, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import RateLimitError
from massgen_cli.events import ReasoningDelta, ReasoningState, ServerToolUse, TextDelta, ToolCall, Usage
from tests.servers.fake_providers import FakeProviderServer, Reply, collect, collect_until_error
from tests.servers.fake_responses import responses_stream

ASK = Request([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}])


@pytest.fixture
def servers() -> Iterator[list[FakeProviderServer]]:
    started: list[FakeProviderServer] = []
    yield started
    for server in started:
        server.stop()


def server(servers: list[FakeProviderServer], *replies: Reply) -> FakeProviderServer:
    started = FakeProviderServer().start()
    started.script(*replies)
    servers.append(started)
    return started


def backend_for(url: str, **settings: object) -> BackendConfig:
    return BackendConfig.model_validate(
        {"type": "openai", "model": "gpt-5", "api_key": "sk-test-responses-0000", "base_url": url, **settings}
    )


def test_type_openai_at_openais_address_speaks_responses_and_other_servers_chat():
    assert BackendConfig(type="openai", model="gpt-5").api_mode == "responses"
    assert (
        BackendConfig(type="openai", model="m", base_url="http://127.0.0.1:9/v1").api_mode
        == "chat_completions"
    )
    assert (
        BackendConfig(type="chatcompletion", model="m", base_url="http://x/v1").api_mode == "chat_completions"
    )
    both = BackendConfig(type="azure_openai", model="gpt-5", api="responses")
    assert both.api_mode == "responses"
    assert BackendConfig(type="grok", model="grok-4").api_mode == "responses", "xAI's tools live there"
    assert BackendConfig(type="gemini", model="gemini-2.5-flash").api_mode == "chat_completions"


async def test_text_reasoning_summary_state_and_usage(servers):
    fake = server(
        servers,
        responses_stream(
            "Paris.",
            summary="The user asks a capital.",
            encrypted="gAAA-secret",
            cached=5,
            reasoning_tokens=3,
        ),
    )
    config = backend_for(
        f"{fake.root_url}/v1",
        api="responses",
        reasoning={"effort": "medium", "summary": "auto"},
        text={"verbosity": "low"},
    )
    backend = create_backend(config)
    try:
        events = await collect(backend, ASK)
    finally:
        await backend.aclose()
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "The user asks a capital."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Paris."
    [state] = [e for e in events if isinstance(e, ReasoningState)]
    assert state.item["encrypted_content"] == "gAAA-secret" and state.item["type"] == "reasoning"
    [usage] = [e for e in events if isinstance(e, Usage)]
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens) == (
        12,
        7,
        5,
        3,
    )
    [sent] = fake.requests
    assert sent.path == "/v1/responses"
    body = sent.body
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"} and body["text"] == {
        "verbosity": "low"
    }
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False
    assert body["input"][0] == {"role": "system", "content": "Be brief."}


async def test_built_in_tools_are_offered_and_reported(servers):
    fake = server(servers, responses_stream("Paris.", searched="capital of France", ran=("print(1+1)", "2")))
    backend = create_backend(
        backend_for(
            f"{fake.root_url}/v1", api="responses", enable_web_search=True, enable_code_interpreter=True
        )
    )
    try:
        events = await collect(backend, ASK)
    finally:
        await backend.aclose()
    used = [(e.name, e.summary, e.ok) for e in events if isinstance(e, ServerToolUse)]
    assert used == [("web_search", "searched: capital of France", True), ("code_interpreter", "2", True)]
    tools = fake.requests[0].body["tools"]
    assert {"type": "web_search"} in tools and {
        "type": "code_interpreter",
        "container": {"type": "auto"},
    } in tools


async def test_function_calls_and_an_error_event(servers):
    fake = server(
        servers,
        responses_stream(calls=[("call_1", "new_answer", '{"content": "Paris"}')]),
        responses_stream("partial", error=("rate_limit_exceeded", "slow down")),
    )
    backend = create_backend(backend_for(f"{fake.root_url}/v1", api="responses", max_retries=0))
    try:
        completion = await complete(backend, ASK)
        _, error = await collect_until_error(backend, ASK)
    finally:
        await backend.aclose()
    assert completion.tool_calls == [ToolCall("call_1", "new_answer", {"content": "Paris"})]
    assert completion.finish_reason == "tool_calls"
    assert isinstance(error, RateLimitError) and "slow down" in str(error)


async def test_the_system_messages_go_as_one_input_message_first(servers):
    fake = server(servers, responses_stream("Pier 3."))
    backend = create_backend(backend_for(f"{fake.root_url}/v1", api="responses"))
    messages = [
        {"role": "system", "content": "You are agent_a."},
        {"role": "system", "content": "Relevant memories:\n- the pier is number 3"},
        {"role": "user", "content": "Which pier?"},
    ]
    try:
        await complete(backend, Request(messages))
    finally:
        await backend.aclose()
    assert fake.requests[0].body["input"] == [
        {"role": "system", "content": "You are agent_a.\n\nRelevant memories:\n- the pier is number 3"},
        {"role": "user", "content": "Which pier?"},
    ]


def test_a_coordinated_turn_carries_reasoning_and_tool_outputs_and_cancels_a_superseded_stream(
    in_process, servers, tmp_path
):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("The capital of France is Paris.")
    fast = server(
        servers,
        responses_stream(
            summary="Check the notes.",
            encrypted="enc-1",
            calls=[("c1", "read_file", '{"path": "notes.txt"}')],
        ),
        responses_stream(calls=[("c2", "new_answer", '{"content": "Paris"}')]),
        responses_stream(calls=[("c3", "vote", '{"agent_id": "agent1", "reason": "mine"}')]),
        responses_stream("The capital of France is Paris."),
    )
    slow = server(
        servers,
        Reply(frames=responses_stream("never sent").frames, delay=60),
        responses_stream(calls=[("c4", "vote", '{"agent_id": "agent1", "reason": "right"}')]),
    )
    common = {"type": "openai", "api": "responses", "model": "gpt-5", "api_key": "sk-test-0000"}
    reader = {**common, "base_url": f"{fast.root_url}/v1", "cwd": "ws", "reasoning": {"effort": "low"}}
    judge = {**common, "base_url": f"{slow.root_url}/v1"}
    agents = [{"id": "reader", "backend": reader}, {"id": "judge", "backend": judge}]
    config = yaml.safe_dump({"agents": agents})
    run = in_process(config)
    result = run.app.ask("What is the capital of France?")
    assert result.winner == "reader" and result.final_answer == "The capital of France is Paris."
    assert [(v.voter, v.target) for v in result.votes] == [("reader", "reader"), ("judge", "reader")]
    after_the_tool = fast.requests[1].body["input"]
    kinds = [item.get("type", item.get("role")) for item in after_the_tool]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"], "reasoning given back first"
    assert after_the_tool[-3]["encrypted_content"] == "enc-1"
    assert after_the_tool[-1]["output"].endswith("The capital of France is Paris.")
    assert len(slow.requests) == 2, "the judge's first stream was superseded by the reader's answer"
    events = (run.app.run_log.directory / "turn_1" / "attempt_1" / "events.jsonl").read_text().splitlines()
    restarts = [json.loads(e) for e in events if '"AgentStatus"' in e and '"restarted"' in e]
    assert any(event["agent_id"] == "judge" for event in restarts)

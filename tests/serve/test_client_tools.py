"""The client's tools through the team: a served request's ``tools`` are offered to the agents beside
their own; a winning answer that calls one is the reply (``tool_calls``, ``finish_reason: "tool_calls"``;
a ``function_call`` item in the Responses API), and the client's result in the next request continues the
turn, the agents reading it as the tool's result. The agents are Chat Completions agents behind a fake
provider on 127.0.0.1 whose model calls the client's tool when it has no result of it (every request it
gets held to OpenAI's published schema); the server is driven by the ``openai`` SDK, and every answer and
stream event is held to the SDK's response models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.serve.serving import ServedInThread, write_configs
from tests.servers.answer_schema import answer_problems, stream_problems
from tests.servers.client_tool_model import ClientToolModel
from tests.servers.fake_providers import FakeProviderServer

TOKEN = "client-tools-token-0123456789"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city, now.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
RESULT = "rain in Oslo, 4 degrees"
ANSWER = f"The client's tool said: {RESULT}"


def agents(root: str, *ids: str) -> str:
    backend = {"type": "chatcompletion", "model": "fake-model", "base_url": f"{root}/v1"}
    return json.dumps({"agents": [{"id": agent_id, "backend": backend} for agent_id in ids]})


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer(ClientToolModel("get_weather", {"city": "Oslo"})).start()
    yield server
    server.stop()  # fails the module if a request broke OpenAI's published schema


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, provider: FakeProviderServer
) -> Iterator[ServedInThread]:
    folder = tmp_path_factory.mktemp("client-tools")
    team, alone = agents(provider.root_url, "agent_a", "agent_b"), agents(provider.root_url, "solo")
    server = ServedInThread(folder / "state", write_configs(folder, {"team": team, "alone": alone}), TOKEN)
    yield server
    server.stop()


def post(served: ServedInThread, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = {"authorization": f"Bearer {TOKEN}"}
    return httpx.post(f"{served.url}{path}", json=body, headers=headers, timeout=120)


def events_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON of each ``data:`` line of a stream (``[DONE]`` left out)."""
    lines = [line.removeprefix("data: ") for line in response.text.splitlines() if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def valid(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    assert answer_problems(kind, data) == [], data
    return data


@pytest.mark.parametrize("model", ["massgen/team", "massgen/alone"])
def test_a_winning_call_of_the_clients_tool_is_the_answer_and_its_result_continues_the_turn(
    served, provider, model
):
    question = [{"role": "user", "content": "What is the weather in Oslo?"}]
    first = valid("chat.completion", post(served, "/chat/completions", {
        "model": model, "messages": question, "tools": [WEATHER]}).json())  # fmt: skip
    choice = first["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Oslo"}
    offered = [r.body for r in provider.requests if any(t["function"]["name"] == "get_weather" for t in
                                                        r.body.get("tools") or ())]  # fmt: skip
    assert offered, "the agents were offered the client's tool"

    result = {"role": "tool", "tool_call_id": call["id"], "content": RESULT}
    said = [*question, choice["message"], result]
    second = valid("chat.completion", post(served, "/chat/completions", {
        "model": model, "messages": said, "tools": [WEATHER]}).json())  # fmt: skip
    assert second["choices"][0]["finish_reason"] == "stop"
    assert second["choices"][0]["message"]["content"] == ANSWER
    read = [m for r in provider.requests for m in r.body["messages"] if m.get("tool_call_id") == call["id"]]
    assert read and read[0]["content"] == RESULT, "the agents read the client's result as the tool's"


def test_a_streamed_call_comes_as_tool_call_deltas_and_every_chunk_has_the_sdks_schema(served):
    question = [{"role": "user", "content": "What is the weather in Oslo?"}]
    body = {"model": "massgen/team", "messages": question, "tools": [WEATHER], "stream": True,
            "stream_options": {"include_usage": True}}  # fmt: skip
    chunks = [
        valid("chat.completion.chunk", chunk) for chunk in events_of(post(served, "/chat/completions", body))
    ]
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]
    assert not any(delta.get("content") for delta in deltas), "a call is no text"
    (call,) = [call for delta in deltas for call in delta.get("tool_calls") or ()]
    assert call["index"] == 0 and call["function"]["name"] == "get_weather"
    finishes = [chunk["choices"][0]["finish_reason"] for chunk in chunks if chunk["choices"]]
    assert [finish for finish in finishes if finish] == ["tool_calls"] and chunks[-1]["usage"]["total_tokens"]

    client = openai.OpenAI(base_url=served.url, api_key=TOKEN, max_retries=0, timeout=120)
    assistant = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call["id"], "type": "function", "function": call["function"]}]}  # fmt: skip
    result = {"role": "tool", "tool_call_id": call["id"], "content": RESULT}
    stream = client.chat.completions.create(
        model="massgen/team",
        messages=[*question, assistant, result],
        tools=[WEATHER],
        stream=True,  # type: ignore[list-item]
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == ANSWER


def test_the_responses_api_calls_the_clients_tool_and_goes_on_from_previous_response_id(served):
    tool = {"type": "function", **WEATHER["function"]}
    asked = {"model": "massgen/team", "input": "What is the weather in Oslo?", "tools": [tool]}
    first = valid("response", post(served, "/responses", asked).json())
    assert first["status"] == "completed"
    (call,) = [item for item in first["output"] if item["type"] == "function_call"]
    assert call["name"] == "get_weather" and json.loads(call["arguments"]) == {"city": "Oslo"}
    assert first["tools"] == [tool] and first["usage"]["total_tokens"] > 0

    output = {"type": "function_call_output", "call_id": call["call_id"], "output": RESULT}
    body = {"model": "massgen/team", "previous_response_id": first["id"], "input": [output], "tools": [tool],
            "stream": True}  # fmt: skip
    events = events_of(post(served, "/responses", body))
    assert stream_problems(events) == []
    text = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    completed = events[-1]["response"]
    assert text == ANSWER and completed["previous_response_id"] == first["id"]
    messages = [item for item in completed["output"] if item["type"] == "message"]
    assert messages[-1]["content"][0]["text"] == ANSWER
    assert completed["massgen_metadata"]["session_id"] == first["massgen_metadata"]["session_id"]


def test_a_clients_tool_that_cannot_be_offered_is_a_400(served, tmp_path: Path):
    question = [{"role": "user", "content": "x"}]
    for tools, param in [
        ([{"type": "function", "function": {"name": "vote"}}], "tools[0].function.name"),
        ([{"type": "custom", "name": "grammar"}], "tools[0].type"),
        ([WEATHER, WEATHER], "tools"),
    ]:
        refused = post(
            served, "/chat/completions", {"model": "massgen/team", "messages": question, "tools": tools}
        )
        assert refused.status_code == 400 and valid("error", refused.json())["error"]["param"] == param
    unknown = post(
        served, "/responses", {"model": "massgen/team", "input": "x", "previous_response_id": "resp_x"}
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "previous_response_id"


def test_an_openai_agents_agent_uses_the_served_team_as_its_model_and_its_tool_result_reaches_the_team(
    served, provider
):
    """The ``openai-agents`` SDK's default model (the Responses API) pointed at the server: the team calls
    the agent's function tool, the SDK runs it, and the team's final answer is made from its result."""
    import agents
    from openai import AsyncOpenAI

    ran: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city, now."""
        ran.append(city)
        return RESULT

    agents.set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=served.url, api_key=TOKEN, max_retries=0, timeout=120)
    model = agents.OpenAIResponsesModel(model="massgen/team", openai_client=client)
    agent = agents.Agent(name="weather", instructions="Answer briefly.", tools=[get_weather], model=model)
    result = agents.Runner.run_sync(agent, "What is the weather in Oslo?")
    assert ran == ["Oslo"]
    assert result.final_output == ANSWER
    read = [m["content"] for r in provider.requests for m in r.body["messages"] if m.get("role") == "tool"]
    assert RESULT in read, "the team read the tool's result"

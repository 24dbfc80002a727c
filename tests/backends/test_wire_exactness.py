"""Every request of real runs held to the providers' published schemas: two agents on each wire format
(Chat Completions, the Responses API, Anthropic's Messages, Gemini's generateContent) play two turns
with task planning (its tool results and its plans block) and long-term memory (its block in turn 2)
against a server on 127.0.0.1 that checks each body with the provider's own SDK types
(``tests.servers.wire_schema``) and refuses one that breaks them, as strict servers do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from massgen_cli.memory.longterm.retrieve.retrieval import HEADER as MEMORIES
from massgen_cli.tools.planning import PLANS_HEADER
from tests.servers.fake_gemini import FakeGeminiServer, field
from tests.servers.fake_providers import FakeProviderServer
from tests.servers.playing_model import PlayingModel

PLAN = {"tasks": [{"description": "Check which pier the ferry leaves from"}]}

BACKENDS = {
    "chat": "{type: chatcompletion, model: fake-model, base_url: '{root}/v1'}",
    "responses": "{type: openai, model: gpt-5-mini, api: responses, api_key: sk-test, base_url: '{root}/v1'}",
    "anthropic": "{type: claude, model: claude-fake, api_key: sk-test, base_url: '{root}'}",
    "gemini": "{type: gemini, model: gemini-2.5-flash, api_key: sk-test, base_url: '{root}'}",
}


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    started = FakeGeminiServer(PlayingModel(first_calls={"create_task_plan": PLAN})).start()
    yield started
    started.stop()  # fails the test if a request broke its API's schema


def config(backend: str) -> str:
    return f"""
agents:
  - {{id: agent_a, backend: {backend}}}
  - {{id: agent_b, backend: {backend}}}
orchestrator:
  coordination: {{enable_agent_task_planning: true}}
memory:
  enabled: true
  persistent_memory: {{enabled: true}}
"""


@pytest.mark.parametrize("wire", list(BACKENDS))
def test_two_turns_with_tools_plans_and_memory_keep_to_the_published_schema(wire, server, in_process):
    run = in_process(config(BACKENDS[wire].replace("{root}", server.root_url)), interactive=True)
    first = run.app.ask("Which pier does the ferry leave from?")
    turn_one = len(server.requests)
    second = run.app.ask("And which pier does the ferry leave from now?")

    assert first.final_answer and second.final_answer, (first.end_reason, second.end_reason)
    assert server.wire_errors == []
    bodies = [request.body for request in server.requests if request.body]  # not those cut off by a cancel
    assert any(tool_results(wire, body) for body in bodies), "tool results went out"
    assert any(PLANS_HEADER in system_text(wire, body) for body in bodies[:turn_one]), "plans went out"
    assert any(MEMORIES in system_text(wire, body) for body in bodies[turn_one:]), "memories went out"
    assert all(one_system_message_first(wire, body) for body in bodies)


def tool_results(wire: str, body: dict[str, Any]) -> list[Any]:
    if wire == "chat":
        return [m for m in body["messages"] if m["role"] == "tool"]
    if wire == "responses":
        return [item for item in body["input"] if item.get("type") == "function_call_output"]
    if wire == "gemini":
        parts = [part for content in body["contents"] for part in content["parts"]]
        return [part for part in parts if field(part, "functionResponse")]
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def system_text(wire: str, body: dict[str, Any]) -> str:
    if wire == "anthropic":
        return body.get("system") or ""
    if wire == "gemini":
        return "\n".join(part.get("text", "") for part in field(body, "systemInstruction")["parts"])
    listed = body["messages"] if wire == "chat" else body["input"]
    return "\n".join(str(m["content"]) for m in listed if m.get("role") == "system")


def one_system_message_first(wire: str, body: dict[str, Any]) -> bool:
    if wire == "anthropic":
        return all(message["role"] in ("user", "assistant") for message in body["messages"])
    if wire == "gemini":
        return all(content["role"] in ("user", "model") for content in body["contents"])
    listed = body["messages"] if wire == "chat" else body["input"]
    return [i for i, item in enumerate(listed) if item.get("role") == "system"] in ([], [0])

"""Compression end to end: an agent's session outgrows its window, its configured summariser (a model
on another server) is asked for the dropped span, and the summary it wrote goes out in the agent's next
request, inside its one system message."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from massgen_cli.memory.context.compression import SUMMARY_PREFIX
from tests.servers.fake_providers import FakeProviderServer, RecordedRequest, Reply, openai_stream

LONG_ANSWER = " ".join(f"fact{i} is remembered here" for i in range(40))
SUMMARY = "The user asked about topics 0 to 3; the answers listed facts. Marker 7731."


def answering(text: str) -> Callable[[RecordedRequest], Reply]:
    """A server's responder that streams ``text`` to every request."""

    def reply(request: RecordedRequest) -> Reply:
        return openai_stream(text)

    return reply


@pytest.fixture
def servers() -> Iterator[tuple[FakeProviderServer, FakeProviderServer]]:
    agent, summariser = FakeProviderServer(answering(LONG_ANSWER)), FakeProviderServer(answering(SUMMARY))
    yield agent.start(), summariser.start()
    agent.stop()
    summariser.stop()


def test_the_configured_summarisers_summary_is_in_the_next_request(servers, in_process):
    agent, summariser = servers
    run = in_process(
        f"""
        agent:
          id: solo
          context_window: 1500
          backend: {{type: chatcompletion, model: agent-model, base_url: "{agent.root_url}/v1"}}
        memory:
          compression:
            summarizer:
              {{provider: chatcompletion, model: summary-model, base_url: "{summariser.root_url}/v1"}}
        """,
        interactive=True,
    )
    for n in range(8):
        assert run.app.ask(f"Question {n}: tell me everything about topic {n} again please.").final_answer

    [asked, *_] = [request.body for request in summariser.requests]
    assert asked["model"] == "summary-model"
    assert "topic 0" in asked["messages"][0]["content"], "the summariser is given the dropped span"
    after = [
        request.body["messages"]
        for request in agent.requests
        if SUMMARY_PREFIX in str(request.body["messages"][0]["content"])
    ]
    assert after, "a request after the compression carried the summary"
    system = after[0][0]
    assert system["role"] == "system" and SUMMARY in system["content"]
    assert [m["role"] for m in after[0]].count("system") == 1

"""A circuit breaker per provider, end to end, against a real provider server on 127.0.0.1 that fails,
then recovers: after two failed turns it opens (a ``BreakerChanged`` event, a warning in the summary),
the next call fails at once with an error saying so and never reaches the server; once its short
cool-down is over, one trial call goes through, finds the provider back and closes it. The scripted
backend has none unless asked for."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from massgen_cli.events import AgentStatus, BreakerChanged, RunEvent
from tests.conftest import wait_until
from tests.scripted import answer, scripted, vote
from tests.servers.fake_providers import FakeProviderServer, openai_error, openai_stream

COOL_DOWN_S = 0.3


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def one_agent(provider: FakeProviderServer) -> str:
    backend = {
        "type": "chatcompletion",
        "model": "fake-model",
        "base_url": f"{provider.root_url}/v1",
        "api_key": "sk-test",
        "max_retries": 0,
        "circuit_breaker": {"failures": 2, "cool_down_seconds": COOL_DOWN_S},
    }
    return json.dumps({"agents": [{"id": "solo", "backend": backend}]})


def test_the_breaker_opens_fails_fast_then_half_opens_and_closes_when_the_provider_is_back(
    in_process, provider: FakeProviderServer
):
    provider.script(openai_error(503, "overloaded", error_type="server_error"))
    provider.script(openai_error(503, "overloaded", error_type="server_error"))
    run = in_process(one_agent(provider))
    heard: list[RunEvent] = []
    run.app.events.subscribe(heard.append)
    assert run.app.ask("Capital of France?").final_answer is None
    second = run.app.ask("Capital of France?")
    changes = [event for event in heard if isinstance(event, BreakerChanged)]
    assert [(change.state, change.failures) for change in changes] == [("open", 2)]
    assert "overloaded" in changes[0].detail and changes[0].provider.startswith("chatcompletion (127.0.0.1:")
    assert any(warning.startswith("circuit breaker open:") for warning in second.warnings)

    held = run.app.ask("Capital of France?")
    assert held.final_answer is None and len(provider.requests) == 2, "refused before it was sent"
    failed = [event for event in heard if isinstance(event, AgentStatus) and event.status == "failed"]
    assert (
        "circuit breaker open" in failed[-1].detail
        and "then one trial call goes through" in failed[-1].detail
    )

    breaker = run.app.run.features.opened["circuit breakers"].extension.breakers["solo"]
    wait_until(lambda: breaker.clock.now() >= breaker.opened_at + COOL_DOWN_S)
    provider.script(openai_stream("Paris."))
    assert run.app.ask("Capital of France?").final_answer == "Paris."
    changes = [event for event in heard if isinstance(event, BreakerChanged)]
    assert [change.state for change in changes] == ["open", "half_open", "closed"]
    assert breaker.state == "closed" and len(provider.requests) == 3


def test_scripted_agents_have_no_breaker_unless_asked(in_process):
    agents = {"a": [answer("x")], "b": [vote("a", "ok")]}
    assert "circuit breakers" not in in_process(scripted(agents)).app.run.features.opened
    asked = scripted(agents, backends={"a": {"circuit_breaker": {"enabled": True}}})
    breakers = in_process(asked).app.run.features.opened["circuit breakers"].extension.breakers
    assert set(breakers) == {"a"}

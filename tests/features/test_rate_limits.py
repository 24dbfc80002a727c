"""``backend.rate_limit``: every agent of a run on the same provider, key and address shares one budget
(an agent with no limit of its own too), and a request over it waits, told in a ``RateLimitWait`` event
and summed in the attempt's ``timings_s``, rather than failing. The minute is waited on a clock the
test moves, so each wait is measured exactly."""

from __future__ import annotations

import json

import pytest

from massgen_cli.agent import clock
from massgen_cli.events import RateLimitWait, RunEvent
from tests.agent.clocks import VirtualClock
from tests.conftest import first_attempt_folder
from tests.scripted import answer, scripted, vote


@pytest.fixture
def virtual_clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    moved = VirtualClock()
    monkeypatch.setattr(clock, "MonotonicClock", lambda: moved)
    return moved


def test_two_agents_share_one_budget_and_wait_for_it(in_process, virtual_clock: VirtualClock):
    text = scripted(
        {"a": [answer("Paris."), vote("a", "right")], "b": [vote("a", "correct")]},
        backends={"a": {"rate_limit": {"requests_per_minute": 1}}},  # b, on the same provider, shares it
    )
    run = in_process(text)
    heard: list[RunEvent] = []
    run.app.events.subscribe(heard.append)
    result = run.app.ask("Capital of France?")
    assert result.final_answer is not None and "Paris" in result.final_answer, "waited, never failed"
    waits = [event for event in heard if isinstance(event, RateLimitWait)]
    sent = len(run.requests("a")) + len(run.requests("b"))
    assert sent >= 3 and {wait.agent_id for wait in waits} == {"a", "b"}
    assert all(wait.limit == "requests_per_minute" and wait.provider == "scripted" for wait in waits)
    assert virtual_clock.elapsed == pytest.approx(60 * (sent - 1)), "one request a minute, both agents'"
    assert sum(wait.seconds for wait in waits) == pytest.approx(virtual_clock.elapsed)
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["timings_s"]["rate_limit_wait"] == pytest.approx(virtual_clock.elapsed)


def test_agents_share_a_budget_only_on_the_same_provider_key_and_address(in_process):
    def wire(url: str, key: str, limit: int | None = None) -> dict[str, object]:
        backend: dict[str, object] = {"type": "chatcompletion", "model": "m", "base_url": url, "api_key": key}
        return {**backend, "rate_limit": {"requests_per_minute": limit}} if limit else backend

    agents = {
        "a": wire("http://127.0.0.1:9/v1", "sk-one", 30),
        "b": wire("http://127.0.0.1:9/v1", "sk-one", 10),
        "c": wire("http://127.0.0.1:9/v1", "sk-two"),
        "d": wire("http://127.0.0.2:9/v1", "sk-one", 5),
    }
    document = {"agents": [{"id": name, "backend": backend} for name, backend in agents.items()]}
    run = in_process(json.dumps(document))
    budgets = run.app.run.features.opened["rate limits"].extension.budgets
    assert budgets["a"][1] is budgets["b"][1] and budgets["a"][1].limits.requests_per_minute == 10, (
        "the lowest"
    )
    assert "c" not in budgets, "another key: no limit was set for it"
    assert budgets["d"][1] is not budgets["a"][1] and budgets["d"][0] == "chatcompletion (127.0.0.2:9)"

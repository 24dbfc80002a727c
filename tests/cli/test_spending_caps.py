"""The run's spending caps through the CLI: ``--max-cost`` (over ``orchestrator.max_cost_usd``) against a real
OpenAI-compatible server on 127.0.0.1 whose replies report their usage, priced by ``backend.pricing``; and
``orchestrator.max_total_tokens`` on scripted agents. A capped run starts no new step once the cap is
spent, ends with the best answer so far, and says why in its summary and on the console."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config
from tests.scripted import answer, scripted, vote
from tests.servers.paced import paced_server

DOLLARS_PER_CALL = 1.0
"""Each reply of the paced server reports 100 input tokens: at 10,000 USD per million, one dollar."""


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with paced_server.PacedServer(latency_s=0.05, tokens_per_s=2000, tokens=10) as running:
        running.latency_by_model.update({"model-b": 0.25, "model-c": 0.5})  # agent a answers first
        yield running


def three_priced_agents(
    url: str, max_cost_usd: float, *, priced: bool = True, ids: str = "abc", input_per_million: float = 10000
) -> str:
    pricing = (
        f", pricing: {{input_per_million: {input_per_million:g}, output_per_million: 0}}" if priced else ""
    )
    agents = "".join(
        f"  - id: {agent}\n"
        f'    backend: {{type: openai, model: model-{agent}, api_key: sk-test, base_url: "{url}"{pricing}}}\n'
        for agent in ids
    )
    return f"agents:\n{agents}orchestrator: {{max_cost_usd: {max_cost_usd}}}\n"


def summaries() -> list[dict[str, Any]]:
    """Every attempt's summary, oldest run first."""
    found = sorted((state_folder() / "massgen_logs").glob("log_*/turn_*/attempt_*/summary.json"))
    return [json.loads(path.read_text()) for path in found]


def test_max_cost_ends_the_run_early_with_the_best_answer_and_says_why(tmp_path: Path, server):
    write_config(tmp_path, three_priced_agents(server.base_url, max_cost_usd=1000))
    full = massgen("--config", "config.yaml", "What is 6 times 7?")
    assert full.exit_code == 0, full.stderr
    full_summary = summaries()[-1]
    full_cost, full_calls = full_summary["total_usage"]["cost_usd"], len(server.served)
    assert full_summary["end_reason"] == "all agents voted" and full_cost > 3 * DOLLARS_PER_CALL
    server.served.clear()

    capped = massgen("--config", "config.yaml", "--max-cost", "1.5", "What is 6 times 7?")

    assert capped.exit_code == 0, capped.stderr
    summary = summaries()[-1]
    spent = summary["total_usage"]["cost_usd"]
    assert 1.5 <= spent < full_cost, "stopped once the cap was spent, before the full run's cost"
    assert summary["end_reason"].startswith("spending cap reached: $")
    assert summary["end_reason"].endswith(" of $1.50; the best answer so far is final")
    assert summary["final_answer"] == capped.stdout.strip() == "The answer from model-a is 42."
    assert spent <= 1.5 + DOLLARS_PER_CALL, "over the cap by one call's worth at most"
    assert summary["winner"] == "a"
    assert len(server.served) < full_calls
    assert all(served.kind != "text" for served in server.served), "no presentation after the cap"
    assert "spending cap reached" in capped.stderr and "no new step starts" in capped.stderr
    assert f"Turn 1 ended: {summary['end_reason']}" in capped.stderr


def test_max_cost_must_be_an_amount_above_zero(tmp_path: Path, server):
    write_config(tmp_path, three_priced_agents(server.base_url, max_cost_usd=1000))
    refused = massgen("--config", "config.yaml", "--max-cost", "0", "Q?")
    assert refused.exit_code == 2 and "--max-cost 0: give an amount in US dollars above 0" in refused.stderr
    assert not server.served
    write_config(tmp_path, three_priced_agents(server.base_url, max_cost_usd=-1))
    bad_key = massgen("--config", "config.yaml", "Q?")
    assert bad_key.exit_code == 2 and "orchestrator.max_cost_usd" in bad_key.stderr


def test_a_model_without_a_known_price_counts_nothing_and_is_said_once(tmp_path: Path, server):
    write_config(tmp_path, three_priced_agents(server.base_url, max_cost_usd=0.01, priced=False))
    run = massgen("--config", "config.yaml", "What is 6 times 7?")
    assert run.exit_code == 0, run.stderr
    summary = summaries()[-1]
    assert summary["end_reason"] == "all agents voted" and summary["total_usage"]["cost_usd"] is None
    for agent in "abc":
        said = f"the spending cap counts nothing for {agent}: no price is known for its model"
        assert run.stderr.count(said) == 1, run.stderr


TOKEN_BUDGET = scripted(
    {
        "first": [answer("Paris."), vote("agent1", "right"), "Paris is the capital."],
        "second": [vote("agent1", "agreed", delay=0.3), vote("agent1", "agreed")],
    },
    orchestrator={"max_total_tokens": 200},
)


def test_the_token_budget_holds_across_the_turns_of_a_session(tmp_path: Path):
    write_config(tmp_path, TOKEN_BUDGET)
    session = massgen("--config", "config.yaml", stdin="What is the capital of France?\nAnd of Italy?\n")
    assert session.exit_code == 1, "the second turn had no answer"
    first, second = summaries()
    assert first["end_reason"].startswith("token budget reached: ") and first["final_answer"] == "Paris."
    spent = first["turn_usage"]["input_tokens"] + first["turn_usage"]["output_tokens"]
    assert f"token budget reached: {spent:,} of 200 tokens" in first["end_reason"]
    assert second["final_answer"] is None and second["turn_usage"]["input_tokens"] == 0
    assert second["end_reason"] == f"token budget reached: {spent:,} of 200 tokens; no agent had answered"
    assert "Turn 2 ended: token budget reached: " in session.stderr
    assert "error: no answer in turn 2" in session.stderr


def overlapping(served: list[Any]) -> int:
    """The most requests the server held at once."""
    edges = sorted([(call.arrived, 1) for call in served] + [(call.ended, -1) for call in served])
    most = held = 0
    for _, change in edges:
        held += change
        most = max(most, held)
    return most


def test_four_parallel_agents_overshoot_a_cap_by_one_call_s_worth_at_most(tmp_path: Path):
    """Four agents start at once, each call a dollar: a $2.50 cap ends at $3 at most (without waiting
    for calls under way they would have spent $4 on their first calls alone); a cap that covers them all
    keeps them parallel."""
    with paced_server.PacedServer(latency_s=0.3, tokens_per_s=2000, tokens=10) as running:
        write_config(tmp_path, three_priced_agents(running.base_url, max_cost_usd=2.5, ids="abcd"))
        capped = massgen("--config", "config.yaml", "What is 6 times 7?")
        assert capped.exit_code == 0, capped.stderr
        spent = summaries()[-1]["total_usage"]["cost_usd"]
        assert 2.5 <= spent <= 2.5 + DOLLARS_PER_CALL
        assert len(running.served) == round(spent / DOLLARS_PER_CALL)
        running.served.clear()

        write_config(tmp_path, three_priced_agents(running.base_url, max_cost_usd=1000, ids="abcd"))
        assert massgen("--config", "config.yaml", "What is 6 times 7?").exit_code == 0
        assert overlapping(running.served) >= 2, "a cap with room to spare lets agents call at once"


def test_a_call_that_crosses_the_cap_stops_the_calls_under_way(tmp_path: Path):
    """Each request is expected to cost a few cents, so every agent's calls start. Agent a answers at
    once (the others start again to consider it, each call a minute long), then votes, and its vote
    reports 20,000 input tokens ($2 against a $1 cap). The moment that call ends, the three calls still
    under way are stopped: the server sees their clients hang up, the run ends with a's answer, and the
    console and summary say what was spent and what was stopped."""
    with paced_server.PacedServer(latency_s=60, tokens_per_s=2000, tokens=10) as running:
        running.latency_by_model["model-a"] = 0.05
        running.prompt_tokens_by_reply[("model-a", "vote")] = 20_000
        config = three_priced_agents(running.base_url, max_cost_usd=1, ids="abcd", input_per_million=100)
        write_config(tmp_path, config)
        capped = massgen("--config", "config.yaml", "What is 6 times 7?")
        assert capped.exit_code == 0, capped.stderr
        assert "The answer from model-a is 42." in capped.stdout
        assert "the calls under way of b, c, d stopped" in capped.stderr
        summary = summaries()[-1]
        assert summary["end_reason"].startswith("spending cap reached: $2"), summary["end_reason"]
        assert summary["total_usage"]["cost_usd"] >= 2
        assert wait_until(lambda: all(call.ended for call in running.served)), "every call ended"
        votes_stopped = sorted(c.model for c in running.served if c.kind == "vote" and not c.completed)
        assert votes_stopped == ["model-b", "model-c", "model-d"]


def wait_until(condition: Any, limit_s: float = 30.0) -> bool:
    """Whether ``condition()`` came true within ``limit_s`` (looked at every 10 ms)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True

"""Tokens and cost: streamed usage as OpenAI and Anthropic report it (cache reads, reasoning), counted here
when a provider reports none, priced by genai-prices or by the YAML, free for the embedded and scripted
models; shown at the end of a turn, in summary.json and in `massgen sessions show`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from genai_prices import Usage as LibraryUsage
from genai_prices import calc_price

from massgen_cli.backends.pricing import priced
from massgen_cli.config.backend import BackendConfig
from massgen_cli.events import Usage
from tests.conftest import first_attempt_folder, run_cli, write_config
from tests.servers.fake_providers import anthropic_stream, collect, openai_stream

ASK_REQUEST = [{"role": "user", "content": "What is 2 + 2?"}]


async def test_openai_usage_keeps_cache_reads_and_reasoning(fake_server, make_openai):
    from massgen_cli.backends.base import Request

    fake_server.script(openai_stream("4.", usage=(120, 40), cached=96, reasoning_tokens=25))
    events = await collect(make_openai(), Request(ASK_REQUEST))
    [usage] = [event for event in events if isinstance(event, Usage)]
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens) == (
        120,
        40,
        96,
        25,
    )


async def test_anthropic_usage_counts_cache_reads_as_input(fake_server, make_anthropic):
    from massgen_cli.backends.base import Request

    fake_server.script(anthropic_stream("4.", usage=(30, 9), cache_read=200))
    events = await collect(make_anthropic(), Request(ASK_REQUEST))
    [usage] = [event for event in events if isinstance(event, Usage)]
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (230, 9, 200)


async def test_a_priced_backend_loads_the_price_library_once_its_response_begins(
    fake_server, make_openai, monkeypatch
):
    """The price library (a third of a second to load) loads while the model works, not when the first
    call ends and the next step begins; a backend whose calls are free never loads it."""
    from massgen_cli.backends import pricing
    from massgen_cli.backends.base import Request

    begun: list[str] = []
    monkeypatch.setattr(pricing, "load_library_soon", lambda: begun.append("loading"))
    for backend, expected in ((make_openai(type="openai"), ["loading"]), (make_openai(type="vllm"), [])):
        begun.clear()
        fake_server.script(openai_stream("4.", usage=(12, 2)))
        events = backend.stream(Request(ASK_REQUEST))
        await anext(events)  # the first event: the response has begun
        assert begun == expected
        await events.aclose()


def test_prices_come_from_the_library_or_the_yaml_and_are_free_for_local_models():
    used = Usage(10_000, 2_000, cached_tokens=4_000)
    expected = calc_price(
        LibraryUsage(input_tokens=10_000, output_tokens=2_000, cache_read_tokens=4_000),
        model_ref="gpt-4o",
        provider_id="openai",
    ).total_price
    assert priced(used, BackendConfig(type="openai", model="gpt-4o")).cost_usd == pytest.approx(
        float(expected)
    )
    own = BackendConfig.model_validate(
        {
            "type": "chatcompletion",
            "model": "private-13b",
            "base_url": "http://127.0.0.1:1/v1",
            "pricing": {"input_per_million": 2.0, "output_per_million": 6.0, "cached_input_per_million": 0.5},
        }
    )
    assert priced(used, own).cost_usd == pytest.approx((6_000 * 2.0 + 4_000 * 0.5 + 2_000 * 6.0) / 1e6)
    assert priced(used, BackendConfig(type="local", model="smollm2-135m")).cost_usd == 0.0
    assert priced(used, BackendConfig(type="scripted", responses=["x"])).cost_usd == 0.0
    unknown = BackendConfig(type="chatcompletion", model="private-13b", base_url="http://127.0.0.1:1/v1")
    assert priced(used, unknown).cost_usd is None, "no price known: unknown, never free"


def openai_agent(url: str, agent_id: str = "solo", model: str = "gpt-4o", extra: str = "") -> str:
    return (
        f"  - id: {agent_id}\n    backend: {{type: openai, model: {model}, api_key: sk-test-usage, "
        f'base_url: "{url}"{extra}}}\n'
    )


def test_a_turn_shows_and_keeps_its_tokens_and_cost(tmp_path: Path, fake_server):
    fake_server.script(openai_stream("Four.", usage=(1_000, 200), cached=400))
    write_config(tmp_path, "agents:\n" + openai_agent(f"{fake_server.root_url}/v1"))
    run = run_cli("--config", "config.yaml", "--session", "priced", "What is 2 + 2?")
    assert run.returncode == 0, run.stderr
    cost = float(
        calc_price(
            LibraryUsage(input_tokens=1_000, output_tokens=200, cache_read_tokens=400),
            "gpt-4o",
            provider_id="openai",
        ).total_price
    )
    assert f"1,200 tokens · ${cost:.4f}" in run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["usage"]["solo"] == {
        "input_tokens": 1_000,
        "output_tokens": 200,
        "cached_tokens": 400,
        "reasoning_tokens": 0,
        "cost_usd": round(cost, 6),
        "estimated": False,
    }
    assert summary["total_usage"]["cost_usd"] == round(cost, 6)
    record = json.loads(
        (Path(os.environ["MASSGEN_HOME"]) / "sessions" / "priced" / "session.json").read_text()
    )
    assert record["exchanges"][0]["usage"]["cost_usd"] == round(cost, 6)
    shown = run_cli("sessions", "show", "priced")
    assert shown.returncode == 0, shown.stderr
    assert "What is 2 + 2?" in shown.stdout and f"${cost:.4f}" in shown.stdout
    assert f"Total: 1,200 tokens · ${cost:.4f}" in shown.stdout


def test_usage_a_provider_does_not_report_is_counted_and_marked_estimated(tmp_path: Path, fake_server):
    fake_server.script(openai_stream("Four, as two and two make four.", usage=None))
    write_config(tmp_path, "agents:\n" + openai_agent(f"{fake_server.root_url}/v1", model="private-13b"))
    run = run_cli("--config", "config.yaml", "What is 2 + 2?")
    assert run.returncode == 0, run.stderr
    assert "tokens (estimated) · cost unknown" in run.stderr
    usage = json.loads((first_attempt_folder() / "summary.json").read_text())["usage"]["solo"]
    assert usage["estimated"] is True and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["cost_usd"] is None


def test_scripted_agents_are_free_and_sessions_show_knows_unknown_sessions(tmp_path: Path):
    write_config(tmp_path, "agent: {id: solo, backend: {type: scripted, responses: [Noted.]}}\n")
    run = run_cli("--config", "config.yaml", "--session", "free", "Note this.")
    assert run.returncode == 0 and "tokens · free" in run.stderr, run.stderr
    missing = run_cli("sessions", "show", "nope")
    assert missing.returncode == 2 and "no session nope" in missing.stderr

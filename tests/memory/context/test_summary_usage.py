"""A summary that compression asks a model for is spent like any call: the agent's usage event carries
its tokens and cost, priced as the summariser's model (issue: the summariser's calls were not counted)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.agent_builder import build_agents
from massgen_cli.config.loader import load_config
from massgen_cli.events import AgentUsage, RunEvent
from tests.conftest import write_config
from tests.servers.fake_providers import FakeProviderServer, openai_stream


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def test_a_configured_summarisers_tokens_are_the_agents_usage(tmp_path: Path, provider):
    provider.script(openai_stream("The user asked about ports; 8123 was chosen.", usage=(1200, 40)))
    config = write_config(
        tmp_path,
        f"""
        agent:
          id: analyst
          backend: {{type: scripted, responses: ["ok"]}}
        memory:
          compression:
            summarizer: {{provider: openai, model: gpt-4o-mini, base_url: {provider.root_url}/v1,
                          api_key: sk-test}}
        """,
    )
    heard: list[RunEvent] = []
    (agent,) = build_agents(load_config(config).config, heard.append)
    assert agent.guard is not None and agent.guard.summarizer is not None
    dropped = [{"role": "user", "content": "Which port?"}, {"role": "assistant", "content": "8123."}]
    summarize, summary_backend = agent.guard.summarizer, agent.summary_backend
    assert summary_backend is not None

    async def scenario() -> str:
        try:
            return await summarize(dropped, "", 200)
        finally:
            await summary_backend.aclose()

    summary = asyncio.run(scenario())
    assert summary == "The user asked about ports; 8123 was chosen."
    (spent,) = [event for event in heard if isinstance(event, AgentUsage)]
    assert spent.agent_id == "analyst"
    assert (spent.usage.input_tokens, spent.usage.output_tokens) == (1200, 40)
    assert spent.usage.cost_usd is not None and spent.usage.cost_usd > 0, "priced as gpt-4o-mini"

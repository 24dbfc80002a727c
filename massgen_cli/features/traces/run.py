"""A run's traces opened: its tracer provider, the tree of its open spans, the step extension and attempt
part that begin and end them, the listener of its events; closing ends what is still open and flushes
every span to the collector."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlparse

from massgen_cli import __version__
from massgen_cli.backends.registry import resolve_base_url
from massgen_cli.config.schema import AgentConfig
from massgen_cli.errors import MassGenError
from massgen_cli.features.declaration import Opened, Opening
from massgen_cli.features.traces.calls import CallSpans
from massgen_cli.features.traces.content import capture_wanted
from massgen_cli.features.traces.exporter import tracer_provider
from massgen_cli.features.traces.spans import EventSpans, TurnSpans
from massgen_cli.features.traces.tree import SpanTree

PROVIDER_NAMES = {
    "openai": "openai",
    "azure_openai": "azure.ai.openai",
    "claude": "anthropic",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "grok": "x_ai",
    "groq": "groq",
    "moonshot": "moonshot",
    "kimi": "moonshot",
}
"""``gen_ai.provider.name`` by backend type, in the GenAI conventions' own names; any other type goes by
its own name."""


def open_traces(opening: Opening) -> Opened:
    provider = tracer_provider(opening.config.telemetry)
    tree = SpanTree(provider.get_tracer("massgen_cli", __version__), opening.place.session.id)
    models = {agent.id or "": model_attributes(agent) for agent in opening.config.agents}
    with_content = capture_wanted()
    opening.emit.subscribe(EventSpans(tree, with_content=with_content))

    async def close() -> None:
        if tree.turn is not None:
            tree.end_turn({"massgen.turn.end_reason": "the run closed"}, "the run closed during the turn")
        await asyncio.to_thread(provider.shutdown)  # exports what is left, waiting on the collector

    return Opened(CallSpans(tree, models, with_content=with_content), TurnSpans(tree), close=close)


def model_attributes(agent: AgentConfig) -> dict[str, Any]:
    """What every model call of ``agent`` says of itself: operation, provider, model, request settings,
    the agent, and the server's address."""
    backend = agent.backend
    backend_type = backend.type or ""
    provider = PROVIDER_NAMES.get(backend_type, backend_type)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,  # the older name of the same attribute, which some readers still want
        "gen_ai.request.model": backend.model or backend_type,
        "gen_ai.request.temperature": backend.temperature,
        "gen_ai.request.max_tokens": backend.max_tokens,
        "gen_ai.request.top_p": backend.top_p,
        "gen_ai.agent.name": agent.id,
        "gen_ai.agent.id": agent.id,
        "massgen.backend.type": backend_type,
    }
    try:
        address = urlparse(resolve_base_url(backend) or "")
    except MassGenError:
        return attributes
    if address.hostname:
        attributes["server.address"] = address.hostname
        attributes["server.port"] = address.port or (443 if address.scheme == "https" else 80)
    return attributes

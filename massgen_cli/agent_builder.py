"""Building a run's agents from the config: each agent's backend (retries reported as notices), its
context guard with its summariser, its attachments and its toolbox."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

from massgen_cli.agent.data import Agent, AgentParts, Emit
from massgen_cli.agent.pricing import accounted
from massgen_cli.backends.base import Backend, Completion, Request
from massgen_cli.backends.pricing import priced
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentUsage, Notice, Usage
from massgen_cli.memory.context.compression import Summarizer
from massgen_cli.memory.context.guard import ContextGuard, DropHandling, backend_summarizer, build_guard
from massgen_cli.tools.agent_model import Ask
from massgen_cli.tools.attachments import AgentMedia, question_roots
from massgen_cli.tools.toolbox import build_toolbox
from massgen_cli.tools.uploads import agent_media


def build_agents(
    config: MassGenConfig, emit: Emit, parts: Mapping[str, AgentParts] | None = None
) -> list[Agent]:
    """Backends, guards and toolboxes for every agent, in registration order (retries are reported via
    ``emit``); ``parts`` gives each agent its toolbox (else the config's tools alone) and keeper."""
    agents = []
    for index, agent_config in enumerate(config.agents):
        agent_id = agent_config.id or ""
        given = (parts or {}).get(agent_id)
        if given is None:
            given = AgentParts(build_toolbox(agent_config, index, config.orchestrator))

        def on_retry(error: BackendError, attempt: int, delay: float, agent_id: str = agent_id) -> None:
            emit(Notice("warning", f"[{agent_id}] {error}; retry {attempt} in {delay:.1f}s"))

        backend = create_backend(agent_config.backend, on_retry=on_retry)
        summary_config = _summary_config(agent_config)
        summary = (create_backend(summary_config), summary_config) if summary_config is not None else None
        summary_backend = summary[0] if summary is not None else None
        summarizer = _summarizer(agent_config, backend, summary, _summary_usage(agent_id, emit))
        guard = _guard(agent_config, backend, DropHandling(summarizer, given.keeper), emit)
        media = _media(config, index, backend, given, emit)
        agent = Agent(
            agent_id,
            agent_config,
            backend,
            guard,
            summary_backend,
            given.toolbox,
            media=media,
            hooks=given.hooks,
        )
        given.toolbox.model.bind(backend, _asked_aside(agent, emit))
        agents.append(agent)
    return agents


def _asked_aside(agent: Agent, emit: Emit) -> Ask:
    """How the agent's tools ask its model something (to look at an image): the call is not shown, and
    what it spends is the agent's, as a step's is."""

    async def gather(request: Request, result: Completion) -> None:
        async with contextlib.aclosing(agent.backend.stream(request)) as events:
            async for event in events:
                result.add(event)

    return lambda request: accounted(agent, request, emit, gather)


def _media(config: MassGenConfig, index: int, backend: Backend, given: AgentParts, emit: Emit) -> AgentMedia:
    """The agent's attachments: its config's, read now (an upload that cannot be sent stops the start;
    what else is not sent is said once, for the whole run)."""
    roots = question_roots(given.toolbox.roots, given.state_folder)
    media, warnings = agent_media(config.agents[index], index, config.orchestrator, backend, roots)
    for warning in warnings:
        emit(Notice("warning", warning))
    return media


def _summary_config(agent_config: AgentConfig) -> BackendConfig | None:
    """The backend config of a configured summariser (``memory.compression.summarizer``)."""
    endpoint = agent_config.memory.compression.summarizer if agent_config.memory else None
    if endpoint is None:
        return None
    return BackendConfig(
        type=endpoint.provider, model=endpoint.model, api_key=endpoint.api_key, base_url=endpoint.base_url
    )


def _guard(agent_config: AgentConfig, backend: Backend, dropped: DropHandling, emit: Emit) -> ContextGuard:
    memory = agent_config.memory
    assert memory is not None, "the loader sets each agent's effective memory"
    window = agent_config.context_window or getattr(backend, "context_window", None)
    return build_guard(
        agent_config.id or "",
        backend.model,
        window,
        memory.compression,
        emit=emit,
        dropped=dropped,
        max_output_tokens=agent_config.backend.max_tokens,
    )


def _summarizer(
    agent_config: AgentConfig,
    backend: Backend,
    summary: tuple[Backend, BackendConfig] | None,
    on_usage: Callable[[Usage, BackendConfig], None],
) -> Summarizer | None:
    """The configured summariser (``summary``: its backend and config), else the agent's own backend;
    scripted agents use extraction. What a summary spends goes to ``on_usage``, priced as the backend
    that made it."""
    if summary is None and agent_config.backend.type == "scripted":
        return None
    summarize_with, config = summary or (backend, agent_config.backend)
    return backend_summarizer(summarize_with, lambda spent: on_usage(spent, config))


def _summary_usage(agent_id: str, emit: Emit) -> Callable[[Usage, BackendConfig], None]:
    """The agent's usage event for a summary its compression asked for (counted in its tokens and cost)."""
    return lambda spent, config: emit(AgentUsage(agent_id, priced(spent, config)))

"""Agents are data: an id, its config and its backend. One step is one backend call, streamed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from massgen_cli.backends.base import Backend, Completion, Message, Request
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentText, Notice, ReasoningDelta, RunEvent, TextDelta
from massgen_cli.logs import AttemptLog


@dataclass
class Agent:
    """One configured agent and the backend it talks to."""

    id: str
    config: AgentConfig
    backend: Backend
    usage_input: int = field(default=0)
    usage_output: int = field(default=0)


def build_agents(config: MassGenConfig, emit: Callable[[RunEvent], None]) -> list[Agent]:
    """Backends for every agent, in registration order (retries are reported through ``emit``)."""
    agents = []
    for agent_config in config.agents:
        agent_id = agent_config.id or ""

        def on_retry(error: BackendError, attempt: int, delay: float, agent_id: str = agent_id) -> None:
            emit(Notice("warning", f"[{agent_id}] {error}; retry {attempt} in {delay:.1f}s"))

        agents.append(Agent(agent_id, agent_config, create_backend(agent_config.backend, on_retry=on_retry)))
    return agents


async def run_step(
    agent: Agent,
    request: Request,
    emit: Callable[[RunEvent], None],
    log: AttemptLog | None,
    *,
    text_kind: str = "content",
) -> Completion:
    """Send one request and stream it; text and reasoning go out as events as they arrive."""
    if log is not None:
        log.request(agent.id, _request_record(agent, request))
    result = Completion()
    async for event in agent.backend.stream(request):
        result.add(event)
        if isinstance(event, TextDelta):
            emit(AgentText(agent.id, event.text, text_kind))
        elif isinstance(event, ReasoningDelta):
            emit(AgentText(agent.id, event.text, "reasoning"))
    agent.usage_input += result.usage.input_tokens
    agent.usage_output += result.usage.output_tokens
    return result


def _request_record(agent: Agent, request: Request) -> dict[str, object]:
    return {
        "agent_id": agent.id,
        "backend": agent.backend.name,
        "model": agent.backend.model,
        "purpose": request.purpose,
        "messages": request.messages,
        "tools": [tool.name for tool in request.tools],
        "response_schema": request.response_schema,
    }


def assistant_echo(completion: Completion) -> Message:
    """The assistant message a step produced, to show the model before a re-ask."""
    return {"role": "assistant", "content": completion.text or "(no text)"}

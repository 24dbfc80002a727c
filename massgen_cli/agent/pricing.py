"""What a call spent: the provider's usage (or, when it reported none, the request and the reply counted
here), priced and emitted as the agent's usage, whether the call completed, failed or was cancelled."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

from massgen_cli.agent.data import Agent, Emit
from massgen_cli.backends.base import Completion, Request
from massgen_cli.backends.pricing import library_ready, needs_library, priced
from massgen_cli.events import AgentUsage, Usage
from massgen_cli.tokens import estimate_message_tokens, estimate_text_tokens


async def accounted(
    agent: Agent, request: Request, emit: Emit, consume: Callable[[Request, Completion], Awaitable[None]]
) -> Completion:
    """``request``'s completion, as ``consume`` gathers it from the agent's backend; what it spent is
    emitted as the agent's usage, whether it completed, failed or was cancelled."""
    result = Completion()
    try:
        await consume(request, result)
    except Exception:  # a failed call spent what came back; one that got no response at all spent nothing
        if result.received:
            _account(agent, _reported_or_estimated(agent, request, result), emit)
        raise
    except BaseException:  # a cancelled call (a restart, Ctrl-C) spent what was sent and what came back
        _account(agent, _reported_or_estimated(agent, request, result), emit)
        raise
    _account(agent, _reported_or_estimated(agent, request, result), emit)
    return result


def _account(agent: Agent, spent: Usage, emit: Emit) -> None:
    """Emit a call's usage, priced. Loading the price library takes a third of a second: until it is
    loaded, pricing runs in a thread and the loop goes on (``Agent.settled`` waits for it)."""
    backend = agent.config.backend
    if library_ready() or not needs_library(backend):
        emit(AgentUsage(agent.id, priced(spent, backend)))
        return
    task = asyncio.get_running_loop().create_task(_price_in_thread(agent, spent, emit))
    agent.pricing.add(task)
    task.add_done_callback(agent.pricing.discard)


async def _price_in_thread(agent: Agent, spent: Usage, emit: Emit) -> None:
    emit(AgentUsage(agent.id, await asyncio.to_thread(priced, spent, agent.config.backend)))


def _reported_or_estimated(agent: Agent, request: Request, result: Completion) -> Usage:
    """The provider's usage; when it reported none, the request and what came back, counted here."""
    if result.usage.tokens:
        return result.usage
    model = agent.backend.model
    output = (
        result.text + result.reasoning + "".join(json.dumps(call.arguments) for call in result.tool_calls)
    )
    return Usage(
        estimate_message_tokens(request.messages, model), estimate_text_tokens(output, model), estimated=True
    )

"""Rate limits (``backend.rate_limit``): one budget of requests and tokens per minute for every agent of
the run on the same provider, key and server address; a request over it waits for room (told in a
``RateLimitWait`` event) rather than failing. Agents on that provider without a ``rate_limit`` of their
own share the budget too (they spend the same key); where agents set different limits, the lowest
holds."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.backends.base import Completion, Request
from massgen_cli.coordination.extension import StepExtension
from massgen_cli.events import EventSink, RateLimitWait
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.provider_events import RateLimitName

if TYPE_CHECKING:
    from massgen_cli.agent.provider_identity import ProviderIdentity
    from massgen_cli.agent.rate_budget import RateBudget, Spent
    from massgen_cli.config.limits import RateLimitSettings
    from massgen_cli.config.schema import AgentConfig

_TAKEN: ContextVar[Spent | None] = ContextVar("rate_limit_taken", default=None)
"""What the request under way in this task took from its budget (each agent's steps run in a task)."""


class RateLimits(StepExtension):
    """Each agent's requests through its provider's budget (see the module docstring)."""

    name: ClassVar[str] = "rate limits"

    def __init__(self, budgets: Mapping[str, tuple[str, RateBudget]], emit: EventSink):
        self.budgets, self.emit = budgets, emit

    async def before_request(self, agent_id: str, request: Request) -> Request:
        held = self.budgets.get(agent_id)
        if held is None:
            return request
        from massgen_cli.tokens import estimate_message_tokens

        provider, budget = held

        def told(limit: RateLimitName, seconds: float) -> None:
            self.emit(RateLimitWait(agent_id, provider, limit, round(seconds, 3)))

        _TAKEN.set(await budget.take(estimate_message_tokens(request.messages), told))
        return request

    async def after_response(self, agent_id: str, request: Request, completion: Completion) -> None:
        taken = _TAKEN.get()
        if taken is not None and completion.usage.tokens:
            taken.tokens = completion.usage.tokens  # what the provider counted, for the rest of the minute
        _TAKEN.set(None)

    async def request_failed(self, agent_id: str, request: Request, error: BaseException) -> None:
        _TAKEN.set(None)  # the request counts; its estimated tokens stay, as nothing says what it spent


def _open(opening: Opening) -> Opened:
    from massgen_cli.agent.clock import MonotonicClock
    from massgen_cli.agent.provider_identity import provider_identity
    from massgen_cli.agent.shared_limits import shared_budget

    groups: dict[ProviderIdentity, list[AgentConfig]] = {}
    for agent in opening.config.agents:
        groups.setdefault(provider_identity(agent.backend), []).append(agent)
    clock, budgets = MonotonicClock(), {}
    for identity, agents in groups.items():
        limits = _lowest([agent.backend.rate_limit for agent in agents])
        if limits is not None:
            budget = shared_budget(identity, limits, clock)
            budgets.update({agent.id or "": (identity.label, budget) for agent in agents})
    return Opened(RateLimits(budgets, opening.emit))


def _lowest(settings: list[RateLimitSettings | None]) -> RateLimitSettings | None:
    given = [limits for limits in settings if limits is not None]
    if not given:
        return None
    requests = [n for limits in given if (n := limits.requests_per_minute) is not None]
    tokens = [n for limits in given if (n := limits.tokens_per_minute) is not None]
    return type(given[0])(
        requests_per_minute=min(requests, default=None), tokens_per_minute=min(tokens, default=None)
    )


FEATURE = Feature(
    "rate limits",
    wanted=lambda opening: any(agent.backend.rate_limit for agent in opening.config.agents),
    open=_open,
    steps_after=("circuit breakers",),
)
"""On when any agent's backend has a ``rate_limit``; its hook comes after the circuit breaker's (a call
the breaker refuses takes nothing from the budget)."""

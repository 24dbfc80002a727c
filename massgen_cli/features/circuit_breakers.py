"""Circuit breakers (``backend.circuit_breaker``): one per provider, key and server address, shared by
every agent of the run that calls it; calls to a provider that keeps failing fail at once, with an error
that says so, until a trial call after the cool-down finds it back (see ``agent.breaker``). Each change
is a ``BreakerChanged`` event."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.backends.base import Completion, Request
from massgen_cli.coordination.extension import StepExtension
from massgen_cli.events import BreakerChanged, EventSink
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.provider_events import BreakerState

if TYPE_CHECKING:
    from massgen_cli.agent.breaker import CircuitBreaker, StateListener
    from massgen_cli.config.backend import BackendConfig

_TRIAL: ContextVar[bool] = ContextVar("circuit_breaker_trial", default=False)
"""Whether the request under way in this task is its breaker's trial call."""


class CircuitBreakers(StepExtension):
    """Each agent's requests through its provider's breaker (see the module docstring)."""

    name: ClassVar[str] = "circuit breakers"

    def __init__(self, breakers: Mapping[str, CircuitBreaker], emit: EventSink):
        self.breakers, self.emit = breakers, emit

    async def before_request(self, agent_id: str, request: Request) -> Request:
        breaker = self.breakers.get(agent_id)
        if breaker is not None:
            _TRIAL.set(breaker.admit(self._told(agent_id)))
        return request

    async def after_response(self, agent_id: str, request: Request, completion: Completion) -> None:
        breaker = self.breakers.get(agent_id)
        if breaker is not None:
            breaker.succeeded(_TRIAL.get(), self._told(agent_id))
            _TRIAL.set(False)

    async def request_failed(self, agent_id: str, request: Request, error: BaseException) -> None:
        breaker = self.breakers.get(agent_id)
        if breaker is not None:
            breaker.ended(error, _TRIAL.get(), self._told(agent_id))
            _TRIAL.set(False)

    def _told(self, agent_id: str) -> StateListener:
        breaker = self.breakers[agent_id]

        def told(state: BreakerState, failures: int, detail: str) -> None:
            self.emit(BreakerChanged(agent_id, breaker.provider, state, failures, detail))

        return told


def guarded(backend: BackendConfig) -> bool:
    """Whether ``backend``'s calls pass a breaker: as its ``enabled`` says; when unset, every backend but
    the scripted one (whose faults are played as written)."""
    enabled = backend.circuit_breaker.enabled
    return enabled if enabled is not None else backend.type != "scripted"


def _open(opening: Opening) -> Opened:
    from massgen_cli.agent.clock import MonotonicClock
    from massgen_cli.agent.provider_identity import provider_identity
    from massgen_cli.agent.shared_limits import shared_breaker

    clock = MonotonicClock()
    breakers = {}
    for agent in opening.config.agents:
        if guarded(agent.backend):
            identity = provider_identity(agent.backend)
            breakers[agent.id or ""] = shared_breaker(identity, agent.backend.circuit_breaker, clock)
    return Opened(CircuitBreakers(breakers, opening.emit))


FEATURE = Feature(
    "circuit breakers",
    wanted=lambda opening: any(guarded(agent.backend) for agent in opening.config.agents),
    open=_open,
)
"""On unless every agent's breaker is off (the scripted backend's is, unless asked for)."""

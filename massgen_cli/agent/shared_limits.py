"""The rate budgets and circuit breakers of one process: every run in it (a batch's questions, the turns
``serve`` runs at once, each in a thread of its own) that calls the same provider with the same key
under the same settings shares one budget and one breaker, as the provider counts them."""

from __future__ import annotations

import threading

from massgen_cli.agent.breaker import CircuitBreaker
from massgen_cli.agent.clock import Clock
from massgen_cli.agent.provider_identity import ProviderIdentity
from massgen_cli.agent.rate_budget import RateBudget
from massgen_cli.config.limits import CircuitBreakerSettings, RateLimitSettings

_LOCK = threading.Lock()
_BUDGETS: dict[tuple[ProviderIdentity, int | None, int | None], RateBudget] = {}
_BREAKERS: dict[tuple[ProviderIdentity, int, float], CircuitBreaker] = {}


def shared_budget(identity: ProviderIdentity, limits: RateLimitSettings, clock: Clock) -> RateBudget:
    """The process's budget for ``identity`` under ``limits`` (made with ``clock`` the first time)."""
    key = (identity, limits.requests_per_minute, limits.tokens_per_minute)
    with _LOCK:
        if key not in _BUDGETS:
            _BUDGETS[key] = RateBudget(limits, clock)
        return _BUDGETS[key]


def shared_breaker(
    identity: ProviderIdentity, settings: CircuitBreakerSettings, clock: Clock
) -> CircuitBreaker:
    """The process's breaker for ``identity`` under ``settings`` (made with ``clock`` the first time)."""
    key = (identity, settings.failures, settings.cool_down_seconds)
    with _LOCK:
        if key not in _BREAKERS:
            _BREAKERS[key] = CircuitBreaker(identity.label, settings, clock)
        return _BREAKERS[key]


def forget_shared_limits() -> None:
    """Start every budget and breaker afresh (runs that must not share what earlier ones spent: tests)."""
    with _LOCK:
        _BUDGETS.clear()
        _BREAKERS.clear()

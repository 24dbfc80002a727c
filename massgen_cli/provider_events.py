"""The events of what guards a provider from the agents: a request waiting for room in its rate limit, and
its circuit breaker changing state. Part of the run's event vocabulary (``events.RunEvent``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RateLimitName = Literal["requests_per_minute", "tokens_per_minute"]
BreakerState = Literal["open", "half_open", "closed"]


@dataclass(frozen=True)
class RateLimitWait:
    """An agent's request waits ``seconds`` for room in its provider's ``backend.rate_limit`` (``limit``
    is the one it is over); the budget is shared by every agent of the run on that provider and key."""

    agent_id: str
    provider: str
    limit: RateLimitName
    seconds: float

    def describe(self) -> str:
        """``b waits 41.2s for openai's requests per minute``."""
        what = self.limit.removesuffix("_per_minute")
        return f"{self.agent_id} waits {self.seconds:.1f}s for {self.provider}'s {what} per minute"


@dataclass(frozen=True)
class BreakerChanged:
    """The circuit breaker of a provider changed state on a call of ``agent_id``'s: ``open`` (after
    ``failures`` failed calls in a row its calls fail at once; ``detail``: the last error), ``half_open``
    (the cool-down is over: one trial call goes through), ``closed`` (the trial call succeeded)."""

    agent_id: str
    provider: str
    state: BreakerState
    failures: int = 0
    detail: str = ""

    def describe(self) -> str:
        """The change on one line, as the console and ``summary.json``'s warnings say it."""
        if self.state == "open":
            why = f" (last: {self.detail})" if self.detail else ""
            return f"circuit breaker open: {self.provider} failed {self.failures} call(s) in a row{why}"
        if self.state == "half_open":
            return f"circuit breaker half-open: one trial call to {self.provider} goes through"
        return f"circuit breaker closed: {self.provider} answered again"

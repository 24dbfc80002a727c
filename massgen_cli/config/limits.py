"""What guards a provider from the agents (``rate_limit:`` and ``circuit_breaker:`` of a backend): how
many requests and tokens a minute its key may send, and when calls to it stop for a while after it kept
failing."""

from __future__ import annotations

from pydantic import PositiveFloat, PositiveInt, model_validator

from massgen_cli.config.base import AtLeastOne, Section


class RateLimitSettings(Section):
    """``backend.rate_limit``: a budget shared by every agent of the run on the same provider, key and
    server address; a request over it waits for room (said in a ``RateLimitWait`` event), never fails."""

    requests_per_minute: PositiveInt | None = None
    """Most requests sent in any 60 seconds; null: no request limit."""
    tokens_per_minute: PositiveInt | None = None
    """Most tokens (input and output, as the provider reports them; a request is counted at its estimated
    input until it completes) in any 60 seconds; null: no token limit.
    """

    @model_validator(mode="after")
    def _some_limit(self) -> RateLimitSettings:
        if self.requests_per_minute is None and self.tokens_per_minute is None:
            raise ValueError("set requests_per_minute, tokens_per_minute or both (or leave rate_limit out)")
        return self


class CircuitBreakerSettings(Section):
    """``backend.circuit_breaker``: after ``failures`` failed calls in a row (errors that may pass: a
    server error, a 429, a timeout, a lost connection; each after its retries), calls to the provider fail
    at once for ``cool_down_seconds``; then one trial call goes through, and its success closes it."""

    enabled: bool | None = None
    """null: on for every backend but the scripted one (whose faults are played as written); true or false
    turns it on or off.
    """
    failures: AtLeastOne = 5
    """Failed calls in a row that open the breaker."""
    cool_down_seconds: PositiveFloat = 30.0
    """Seconds calls fail at once before a trial call is let through."""

"""A provider's circuit breaker on a clock the test moves: failures that may pass on their own open it
after the configured count in a row; open, it refuses at once saying for how long; after the cool-down
one trial call goes through (the others are refused), its failure opens it again and its success
closes it; a cancel or an error of the request's own neither counts nor clears the count."""

from __future__ import annotations

import asyncio

import pytest

from massgen_cli.agent.breaker import CircuitBreaker, CircuitOpenError
from massgen_cli.config.limits import CircuitBreakerSettings
from massgen_cli.errors import BackendError, ContextLengthError, ServerError
from tests.agent.clocks import VirtualClock

DOWN = ServerError("openai: server error 503: overloaded", provider="openai")


@pytest.fixture
def changes() -> list[tuple[str, int, str]]:
    return []


def breaker(clock: VirtualClock) -> CircuitBreaker:
    return CircuitBreaker(
        "openai (api.openai.com)", CircuitBreakerSettings(failures=3, cool_down_seconds=30), clock
    )


def test_it_opens_after_failures_in_a_row_then_half_opens_for_one_trial_and_closes(changes):
    clock = VirtualClock()
    guard, told = breaker(clock), lambda *change: changes.append(change)
    for _ in range(2):
        assert guard.admit(told) is False
        guard.ended(DOWN, False, told)
    guard.ended(ContextLengthError("too long"), guard.admit(told), told)  # the request's own: not counted
    guard.ended(asyncio.CancelledError(), guard.admit(told), told)
    assert guard.state == "closed" and guard.failures == 2
    guard.ended(DOWN, guard.admit(told), told)
    assert guard.state == "open" and changes == [("open", 3, str(DOWN))]

    clock.time += 29
    with pytest.raises(
        CircuitOpenError, match=r"failed 3 call\(s\) in a row; its calls are held for 1.0s more"
    ):
        guard.admit(told)
    clock.time += 1
    assert guard.admit(told) is True, "the cool-down is over: this call is the trial"
    with pytest.raises(CircuitOpenError, match="being tried again by one call"):
        guard.admit(told)
    guard.ended(DOWN, True, told)
    assert guard.state == "open" and changes[1:] == [("half_open", 3, ""), ("open", 4, str(DOWN))]

    clock.time += 30
    trial = guard.admit(told)
    guard.succeeded(trial, told)
    assert guard.state == "closed" and guard.failures == 0 and changes[-1] == ("closed", 0, "")
    assert guard.admit(told) is False


def test_a_cancelled_trial_lets_another_call_try(changes):
    clock = VirtualClock()
    guard, told = breaker(clock), lambda *change: changes.append(change)
    for _ in range(3):
        guard.ended(DOWN, guard.admit(told), told)
    clock.time += 30
    guard.ended(asyncio.CancelledError(), guard.admit(told), told)
    assert guard.state == "half_open" and guard.admit(told) is True


def test_the_refusal_is_a_backend_error_that_is_not_retried():
    refusal = CircuitOpenError("held", provider="openai")
    assert isinstance(refusal, BackendError) and not refusal.retryable

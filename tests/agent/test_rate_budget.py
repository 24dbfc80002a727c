"""A provider's rate limit as a budget over a sliding minute, on a clock the test moves: requests wait
in the order they came for the oldest to leave the window; tokens count as estimated until the call
completes, then as the provider reported them; a request larger than the whole budget goes alone."""

from __future__ import annotations

import asyncio

from massgen_cli.agent.rate_budget import RateBudget
from massgen_cli.config.limits import RateLimitSettings
from tests.agent.clocks import VirtualClock


def test_requests_over_the_minute_wait_for_the_oldest_to_leave_it_in_the_order_they_came():
    clock, waits = VirtualClock(), []
    budget = RateBudget(RateLimitSettings(requests_per_minute=2), clock)

    async def request(name: str, admitted: list[tuple[str, float]]) -> None:
        await budget.take(10, lambda limit, seconds: waits.append((name, limit, seconds)))
        admitted.append((name, clock.elapsed))

    async def five() -> list[tuple[str, float]]:
        admitted: list[tuple[str, float]] = []
        await asyncio.gather(*(request(name, admitted) for name in "abcde"))
        return admitted

    admitted = asyncio.run(five())
    assert admitted == [("a", 0), ("b", 0), ("c", 60), ("d", 60), ("e", 120)]
    assert waits == [("c", "requests_per_minute", 60), ("e", "requests_per_minute", 60)]


def test_tokens_count_as_reported_once_known_and_an_oversized_request_goes_alone():
    clock, waits = VirtualClock(), []
    budget = RateBudget(RateLimitSettings(tokens_per_minute=100), clock)

    def take(tokens: int):  # type: ignore[no-untyped-def]
        return asyncio.run(budget.take(tokens, lambda limit, seconds: waits.append((limit, seconds))))

    first = take(60)
    first.tokens = 30  # the provider reported fewer than estimated: room for 70 more
    clock.time += 10
    take(70)
    assert waits == [] and clock.elapsed == 10
    take(50)  # over by 50: waits for the first (30) and second (70) requests to leave
    assert waits == [("tokens_per_minute", 60)] and clock.elapsed == 70
    take(500)  # larger than the budget: it waits for the window to empty, then goes alone
    assert waits[-1] == ("tokens_per_minute", 60) and clock.elapsed == 130

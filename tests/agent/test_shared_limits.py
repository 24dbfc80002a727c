"""A process's rate budgets and circuit breakers are shared by every run in it that calls the same
provider with the same key under the same settings (a batch's questions, serve's turns, each in a
thread of its own with its own event loop), and stay right when those threads take from them at once."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from massgen_cli.agent.provider_identity import ProviderIdentity
from massgen_cli.agent.shared_limits import forget_shared_limits, shared_breaker, shared_budget
from massgen_cli.app import MassGenApp
from massgen_cli.config import load_config
from massgen_cli.config.limits import CircuitBreakerSettings, RateLimitSettings
from tests.agent.clocks import VirtualClock

OPENAI = ProviderIdentity("openai", "https://api.openai.com/v1", "digest-one")


class WouldWait(Exception):
    """Raised by a clock that never moves, where a request would wait for room."""


class FrozenClock:
    def now(self) -> float:
        return 1000.0

    async def sleep(self, seconds: float) -> None:
        raise WouldWait(seconds)


def test_the_same_provider_key_and_settings_get_the_same_budget_and_breaker():
    clock, limits = VirtualClock(), RateLimitSettings(requests_per_minute=10)
    assert shared_budget(OPENAI, limits, clock) is shared_budget(OPENAI, limits, VirtualClock())
    other_key = ProviderIdentity("openai", "https://api.openai.com/v1", "digest-two")
    assert shared_budget(other_key, limits, clock) is not shared_budget(OPENAI, limits, clock)
    assert shared_budget(OPENAI, RateLimitSettings(requests_per_minute=5), clock) is not shared_budget(
        OPENAI, limits, clock
    )
    settings = CircuitBreakerSettings(failures=3)
    assert shared_breaker(OPENAI, settings, clock) is shared_breaker(OPENAI, settings, clock)
    forget_shared_limits()
    assert shared_breaker(OPENAI, settings, clock).state == "closed"


def test_threads_taking_at_once_never_let_through_more_than_the_minute_allows():
    budget = shared_budget(OPENAI, RateLimitSettings(requests_per_minute=5), FrozenClock())
    start = threading.Barrier(4)
    admitted: list[int] = []
    waited: list[float] = []

    def run() -> None:
        async def three() -> None:
            for _ in range(3):
                try:
                    await budget.take(10, lambda limit, seconds: None)
                    admitted.append(1)
                except WouldWait as wait:
                    waited.append(wait.args[0])

        start.wait()
        asyncio.run(three())

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(admitted) == 5 and len(waited) == 7 and set(waited) == {60.0}


def test_two_runs_of_one_process_share_their_provider_s_budget_and_breaker(tmp_path: Path):
    backend = {"type": "chatcompletion", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x"}
    limited = {**backend, "rate_limit": {"requests_per_minute": 30}}
    (tmp_path / "config.yaml").write_text(json.dumps({"agent": {"id": "a", "backend": limited}}))
    loaded = load_config(tmp_path / "config.yaml")
    first = MassGenApp(loaded, state_dir=tmp_path / "state", session_id="one")
    second = MassGenApp(loaded, state_dir=tmp_path / "state", session_id="two")
    try:
        opened = [app.run.features.opened for app in (first, second)]
        budgets = [features["rate limits"].extension.budgets["a"][1] for features in opened]
        breakers = [features["circuit breakers"].extension.breakers["a"] for features in opened]
        assert budgets[0] is budgets[1] and breakers[0] is breakers[1]
    finally:
        first.close()
        second.close()

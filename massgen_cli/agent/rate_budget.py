"""A provider's rate limit as a budget over a sliding 60-second window: requests are let through in the
order they came while the requests and tokens of the last minute leave room, and wait on the clock
until the oldest of those leave the window when they do not. Runs in several threads of a process may
share one budget (``shared_limits``): each event loop's requests keep their order among themselves."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from massgen_cli.agent.clock import Clock
from massgen_cli.config.limits import RateLimitSettings
from massgen_cli.provider_events import RateLimitName

WINDOW_SECONDS = 60.0
WaitListener = Callable[[RateLimitName, float], None]


@dataclass
class Spent:
    """One request let through: when, and its tokens (its estimated input until it completes)."""

    at: float
    tokens: int


class RateBudget:
    """The requests and tokens per minute one provider and key may take (see the module docstring)."""

    def __init__(self, limits: RateLimitSettings, clock: Clock):
        self.limits, self.clock = limits, clock
        self._spent: deque[Spent] = deque()
        self._spent_lock = threading.Lock()
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )  # one a loop, fair: the requests that wait go through in the order they came

    async def take(self, tokens: int, on_wait: WaitListener) -> Spent:
        """Room for one request of about ``tokens`` tokens, waited for (``on_wait`` hears each wait)."""
        async with self._turn():
            while True:
                with self._spent_lock:
                    wait = self._wait(tokens)
                    if wait is None:
                        spent = Spent(self.clock.now(), tokens)
                        self._spent.append(spent)
                        return spent
                limit, seconds = wait
                on_wait(limit, seconds)
                await self.clock.sleep(seconds)

    def _turn(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._spent_lock:
            return self._turns.setdefault(loop, asyncio.Lock())

    def _wait(self, tokens: int) -> tuple[RateLimitName, float] | None:
        """Which limit a request of ``tokens`` is over now and how long until it is not; None: room."""
        now = self.clock.now()
        while self._spent and self._spent[0].at <= now - WINDOW_SECONDS:
            self._spent.popleft()
        requests, most_tokens = self.limits.requests_per_minute, self.limits.tokens_per_minute
        if requests is not None and len(self._spent) >= requests:
            return "requests_per_minute", self._until_gone(len(self._spent) - requests + 1, now)
        if most_tokens is not None and self._spent:
            over = sum(spent.tokens for spent in self._spent) + tokens - most_tokens
            if over > 0:
                return "tokens_per_minute", self._until_gone(self._covering(over), now)
        return None

    def _covering(self, tokens: int) -> int:
        """How many of the oldest requests must leave the window to free ``tokens`` (all: a request
        larger than the whole budget goes alone)."""
        freed = 0
        for count, spent in enumerate(self._spent, start=1):
            freed += spent.tokens
            if freed >= tokens:
                return count
        return len(self._spent)

    def _until_gone(self, count: int, now: float) -> float:
        """Seconds until the ``count`` oldest requests have left the window."""
        return max(self._spent[count - 1].at + WINDOW_SECONDS - now, 0.0) or 1e-3

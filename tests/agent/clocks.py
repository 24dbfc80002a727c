"""A clock a test moves: waiting on it moves it at once by the time waited, so a minute's rate limit is
waited in no time and every wait is measured exactly."""

from __future__ import annotations

import asyncio


class VirtualClock:
    def __init__(self, start: float = 1000.0):
        self.time = start
        self.started = start
        self.waits: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.time += seconds
        await asyncio.sleep(0)

    @property
    def elapsed(self) -> float:
        return self.time - self.started

"""Bounded retries with exponential backoff and jitter, for errors that may pass on their own.

A call is retried only while it has yielded nothing: once text reached the caller, a retry would
repeat it, so the error goes up instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, Callable

from massgen_cli.backends.base import Backend, Request
from massgen_cli.backends.stream_failures import stream_failure
from massgen_cli.errors import BackendError, RateLimitError
from massgen_cli.events import StreamEvent

MAX_DELAY_SECONDS = 30.0

RetryListener = Callable[[BackendError, int, float], None]


class RetryingBackend:
    """Wraps a backend; ``on_retry(error, attempt, delay)`` hears about each retry."""

    def __init__(
        self, inner: Backend, *, max_retries: int, base_delay: float, on_retry: RetryListener | None = None
    ):
        self.inner = inner
        self.name, self.model, self.capabilities = inner.name, inner.model, inner.capabilities
        self.context_window: int | None = getattr(inner, "context_window", None)
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.on_retry = on_retry

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        for attempt in range(self.max_retries + 1):
            yielded = False
            try:
                # aclosing: a caller that stops early also closes the inner stream and its connection.
                async with contextlib.aclosing(self.inner.stream(request)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except Exception as raised:  # whatever the provider's stream raised is this agent's failure
                error = raised if isinstance(raised, BackendError) else stream_failure(self.name, raised)
                if yielded or not error.retryable or attempt == self.max_retries:
                    if error is raised:
                        raise
                    raise error from raised
                delay = retry_delay(error, attempt, self.base_delay)
                if self.on_retry:
                    self.on_retry(error, attempt + 1, delay)
                await asyncio.sleep(delay)

    async def aclose(self) -> None:
        await self.inner.aclose()


def retry_delay(error: BackendError, attempt: int, base_delay: float) -> float:
    """Exponential backoff with full jitter; a server's Retry-After wins when it is longer."""
    backoff = min(MAX_DELAY_SECONDS, base_delay * (2**attempt))
    delay = random.uniform(backoff / 2, backoff)
    if isinstance(error, RateLimitError) and error.retry_after is not None:
        delay = max(delay, min(error.retry_after, MAX_DELAY_SECONDS * 4))
    return delay

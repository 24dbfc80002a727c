"""A circuit breaker per provider: closed, its calls go through; after ``failures`` failed calls in a row
it opens and its calls fail at once; after the cool-down it is half-open and lets one trial call
through, whose success closes it and whose failure opens it again. Only errors that may pass on their
own count (a server error, a 429, a timeout, a lost connection: ``BackendError.retryable``), each
after the backend's retries; any other outcome of a call neither counts nor clears the count. Runs in
several threads of a process may share one breaker (``shared_limits``): its changes are made under a
lock."""

from __future__ import annotations

import threading
from collections.abc import Callable

from massgen_cli.agent.clock import Clock
from massgen_cli.config.limits import CircuitBreakerSettings
from massgen_cli.errors import BackendError
from massgen_cli.provider_events import BreakerState
from massgen_cli.text import one_line

StateListener = Callable[[BreakerState, int, str], None]
"""Hears each change: the new state, the failures in a row, the last error's line."""
ERROR_CHARS = 200


class CircuitOpenError(BackendError):
    """A call refused at once: its provider's circuit breaker is open (or its trial call is out)."""


class CircuitBreaker:
    """One provider's breaker (see the module docstring)."""

    def __init__(self, provider: str, settings: CircuitBreakerSettings, clock: Clock):
        self.provider, self.settings, self.clock = provider, settings, clock
        self.state: BreakerState = "closed"
        self.failures = 0
        self.opened_at = 0.0
        self.trial_out = False
        self.lock = threading.Lock()

    def admit(self, on_change: StateListener) -> bool:
        """Let a call through (True: it is the half-open breaker's trial call), or raise
        ``CircuitOpenError`` saying why not and for how long."""
        with self.lock:
            return self._admit(on_change)

    def _admit(self, on_change: StateListener) -> bool:
        if self.state == "open":
            left = self.opened_at + self.settings.cool_down_seconds - self.clock.now()
            if left > 0:
                raise CircuitOpenError(
                    f"{self.provider} failed {self.failures} call(s) in a row; its calls are held for "
                    f"{left:.1f}s more (circuit breaker open), then one trial call goes through",
                    provider=self.provider,
                )
            self.state = "half_open"
            on_change("half_open", self.failures, "")
        if self.state == "closed":
            return False
        if self.trial_out:
            raise CircuitOpenError(
                f"{self.provider} is being tried again by one call (circuit breaker half-open); calls to "
                "it fail until that call succeeds",
                provider=self.provider,
            )
        self.trial_out = True
        return True

    def succeeded(self, trial: bool, on_change: StateListener) -> None:
        """A call it let through completed: the count clears, and the breaker closes."""
        with self.lock:
            self._succeeded(trial, on_change)

    def _succeeded(self, trial: bool, on_change: StateListener) -> None:
        self.failures = 0
        if trial:
            self.trial_out = False
        if self.state != "closed":
            self.state = "closed"
            on_change("closed", 0, "")

    def ended(self, error: BaseException, trial: bool, on_change: StateListener) -> None:
        """A call it let through ended with ``error``: a failure that counts (the trial's opens it again),
        or one that does not (a cancel, an error of the request's own), which only frees the trial."""
        with self.lock:
            self._ended(error, trial, on_change)

    def _ended(self, error: BaseException, trial: bool, on_change: StateListener) -> None:
        if trial:
            self.trial_out = False
        if not (isinstance(error, BackendError) and error.retryable):
            return
        self.failures += 1
        opens = trial or (self.state == "closed" and self.failures >= self.settings.failures)
        if opens:
            self.state, self.opened_at = "open", self.clock.now()
            on_change("open", self.failures, one_line(str(error), ERROR_CHARS))

"""Threads that never hold the process: the event loop's default executor runs each blocking call
(``asyncio.to_thread``: file tools, synchronous custom tools, memory calls) in a daemon thread, so a
call that hangs for good (a custom tool stuck in a loop, a read that never returns) is abandoned when
its timeout fires and cannot keep the process from exiting. Closing the loop waits a moment for calls
still running, then lets them go."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

SHUTDOWN_GRACE_S = 1.0
"""How long closing the loop waits for blocking calls still running before abandoning them."""

P = ParamSpec("P")
T = TypeVar("T")


class DaemonThreadExecutor(ThreadPoolExecutor):
    """Runs every call in a daemon thread of its own; ``shutdown`` waits at most ``SHUTDOWN_GRACE_S``.
    (A ``ThreadPoolExecutor`` by type only, as the event loop requires; its pool is never used.)"""

    def __init__(self, name: str = "massgen-worker"):
        super().__init__(max_workers=1, thread_name_prefix=name)
        self._name = name
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot run a call after the executor was shut down")
            thread = threading.Thread(
                target=self._run, args=(future, fn, args, kwargs), name=self._name, daemon=True
            )
            self._threads.add(thread)
        thread.start()
        return future

    def _run(self, future: Future[Any], fn: Callable[..., Any], args: Any, kwargs: Any) -> None:
        try:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as error:  # the caller's to see, as ThreadPoolExecutor does
                    future.set_exception(error)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            running = list(self._threads)
        if not wait:
            return
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))

    @property
    def running(self) -> int:
        """How many calls are still running (abandoned ones included)."""
        with self._lock:
            return len(self._threads)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An event loop whose blocking calls run in daemon threads (the factory for ``asyncio.Runner``)."""
    loop = asyncio.new_event_loop()
    loop.set_default_executor(DaemonThreadExecutor())
    return loop

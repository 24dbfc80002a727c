"""A shared store's writes under contention: a transaction that PostgreSQL aborts to break a deadlock or
a serialization conflict (SQLSTATE 40P01, 40001), or whose connection drops, is tried again whole after
a bounded, jittered wait."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from massgen_cli.errors import MemoryStoreError, StoreUnreachable

ATTEMPTS = 6
FIRST_WAIT_SECONDS = 0.05
LONGEST_WAIT_SECONDS = 2.0

T = TypeVar("T")


class StoreContention(MemoryStoreError):
    """A write that another process's write made the server abort (or whose connection dropped); it
    changed nothing, and trying it again is safe."""


class ConnectionLost(StoreContention, StoreUnreachable):
    """A statement whose connection to the server broke: tried again (the server may be back), and once
    the tries are spent, the server cannot be reached."""


def retried(action: Callable[[], T], attempts: int = ATTEMPTS) -> T:
    """``action()``, tried again while it ends in ``StoreContention`` (at most ``attempts`` times, each
    wait up to twice the one before, drawn at random so the writers that met do not meet again)."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except StoreContention:
            if attempt == attempts:
                raise
            time.sleep(random.uniform(0, min(LONGEST_WAIT_SECONDS, FIRST_WAIT_SECONDS * 2**attempt)))
    raise AssertionError("unreachable")

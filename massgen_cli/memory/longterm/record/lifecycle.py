"""Memory levels and their lifetimes: working (30 min), session (2 h), episodic (7 days), semantic
(permanent) by default, configurable under ``memory.lifecycle``. Expired memories are never returned.

Which level what gets: votes and answers shared during coordination are working memory; scoped
entries and slots are session memory; questions, answers, reasoning and dropped context recorded for
an agent are episodic; facts extracted by the memory LLM and imported records are semantic.
"""

from __future__ import annotations

import time

from massgen_cli.config.memory import LifecycleConfig

LEVELS = ("working", "session", "episodic", "semantic")


def expires_at(level: str, lifecycle: LifecycleConfig, now: float | None = None) -> float | None:
    """When a memory of ``level`` recorded ``now`` expires (epoch seconds), or None for never."""
    if level not in LEVELS:
        raise ValueError(f"unknown memory level {level!r}; one of {', '.join(LEVELS)}")
    ttl = getattr(lifecycle, f"{level}_ttl_seconds")
    return None if ttl is None else (now if now is not None else time.time()) + ttl


def expired(deadline: float | None, now: float | None = None) -> bool:
    return deadline is not None and deadline <= (now if now is not None else time.time())

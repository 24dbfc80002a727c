"""What a turn leaves behind (``TurnResult``, written as summary.json) and the presentation switch for
an agent's write context paths."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from massgen_cli.coordination.agents import Agent


@dataclass
class TurnResult:
    """What ``summary.json`` holds for the last attempt of a turn."""

    session_id: str
    turn: int
    attempt: int
    question: str
    answers: dict[str, str]
    votes: list[dict[str, str]]
    winner: str | None
    final_answer: str | None
    end_reason: str
    usage: dict[str, dict[str, Any]]
    """Per agent: the tokens and cost of its calls in this attempt (``Usage.fields``)."""
    timings_s: dict[str, float]
    memory_errors: list[str] = field(default_factory=list)
    tool_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    output_folder: str | None = None
    agent_status: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    total_usage: dict[str, Any] = field(default_factory=dict)
    """Every agent's usage in this attempt, summed."""
    turn_usage: dict[str, Any] = field(default_factory=dict)
    """Every agent's usage in the turn so far (its earlier attempts too), summed."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def presenting(agent: Agent) -> Iterator[None]:
    """While the agent writes the final answer, its write context paths are writable."""
    roots = agent.toolbox.roots
    if roots is not None:
        roots.presenting = True
    try:
        yield
    finally:
        if roots is not None:
            roots.presenting = False


WARNING_LEVELS = ("warning", "degraded", "error")

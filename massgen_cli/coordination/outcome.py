"""What a turn leaves behind: ``TurnResult``, the library's return value, written as ``summary.json`` by
``to_dict`` at the log's edge."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from massgen_cli.attempts import Vote
from massgen_cli.events import Usage


def refused_end(reason: str, *, answered: bool) -> str:
    """The end reason of an attempt that a refused step (``agent.data.StepRefused``) or a halt of the run
    ended early."""
    return f"{reason}; the best answer so far is final" if answered else f"{reason}; no agent had answered"


@dataclass
class TurnResult:
    """The last attempt of a turn (or an attempt post-evaluation rejected, in its own summary)."""

    session_id: str
    turn: int
    attempt: int
    question: str
    answers: dict[str, str]
    votes: list[Vote]
    winner: str | None
    final_answer: str | None
    end_reason: str
    usage: dict[str, Usage]
    """Per agent: the tokens and cost of its calls in this attempt."""
    timings_s: dict[str, float]
    memory_errors: list[str] = field(default_factory=list)
    tool_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    output_folder: str | None = None
    agent_status: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    total_usage: Usage = field(default_factory=lambda: Usage(0, 0))
    """Every agent's usage in this attempt, summed."""
    turn_usage: Usage = field(default_factory=lambda: Usage(0, 0))
    """Every agent's usage in the turn so far (its earlier attempts too), summed."""
    timed_out: bool = False
    """The attempt was ended by its time limit."""

    def to_dict(self) -> dict[str, Any]:
        """The ``summary.json`` record (DESIGN.md's contract): every field but ``timed_out``, copied, each
        usage as ``Usage.fields`` gives it."""
        record = asdict(self)
        del record["timed_out"]
        return record | {
            "usage": {agent_id: used.fields() for agent_id, used in self.usage.items()},
            "total_usage": self.total_usage.fields(),
            "turn_usage": self.turn_usage.fields(),
        }

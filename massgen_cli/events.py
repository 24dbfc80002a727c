"""The closed vocabulary of typed events.

Backends yield stream events; the runner turns them into run events. The same events feed the
console, the JSON logs and the tests.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call; ``arguments`` is the decoded JSON object."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Tokens spent by one backend call."""

    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Finish:
    """The end of one backend call: ``stop``, ``tool_calls``, ``length`` or ``error``."""

    reason: str


StreamEvent = TextDelta | ReasoningDelta | ToolCall | Usage | Finish


@dataclass(frozen=True)
class AgentText:
    """An agent streamed text."""

    agent_id: str
    text: str
    kind: str = "content"


@dataclass(frozen=True)
class AgentStatus:
    """An agent changed state: ``working``, ``answered``, ``voted``, ``restarted``, ``done``, ``failed``."""

    agent_id: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class Notice:
    """A line worth showing the user (a warning, a retry, a limit reached). ``degraded`` says the run
    works differently because a part failed (shown even with --quiet)."""

    level: str
    message: str


@dataclass(frozen=True)
class ContextStatus:
    """How full an agent's context window is with a request (counted as it goes out when far from full)."""

    agent_id: str
    turn: int
    tokens: int
    window: int


@dataclass(frozen=True)
class ToolStarted:
    """An agent's tool call began; ``arguments`` as the model sent them."""

    agent_id: str
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    """An agent's tool call ended: ``ok`` is false for a refused, failed or timed-out call; ``summary``
    is the result's first line; ``chars`` its length."""

    agent_id: str
    call_id: str
    name: str
    ok: bool
    seconds: float
    summary: str
    chars: int


@dataclass(frozen=True)
class FinalAnswer:
    """The answer of a turn, by the agent that presented it."""

    agent_id: str
    text: str


@dataclass(frozen=True)
class TurnEnded:
    """A turn is over; ``reason`` says why it ended."""

    turn: int
    reason: str
    usage: dict[str, Usage] = field(default_factory=dict)
    winner: str | None = None
    votes: dict[str, int] = field(default_factory=dict)


RunEvent = (
    AgentText | AgentStatus | ContextStatus | Notice | ToolStarted | ToolFinished | FinalAnswer | TurnEnded
)


def event_to_dict(event: StreamEvent | RunEvent) -> dict[str, Any]:
    """The JSON form of an event: its fields plus ``type``."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}

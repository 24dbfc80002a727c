"""The closed vocabulary of typed events.

Backends yield stream events; the runner turns them into run events. The same events feed the
console, the JSON logs and the tests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


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
    """Tokens spent by one backend call, or summed over several. ``input_tokens`` include the
    ``cached_tokens`` read from the provider's prompt cache; ``output_tokens`` include the
    ``reasoning_tokens``. ``estimated``: counted here because the provider reported none.
    ``cost_usd``: None when no price is known for the model."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = 0.0
    estimated: bool = False

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            cost,
            self.estimated or other.estimated,
        )

    def fields(self) -> dict[str, Any]:
        """As ``summary.json`` and the session record hold it (cost to a millionth of a dollar)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "estimated": self.estimated,
        }

    def describe(self) -> str:
        """``1,234 tokens · $0.0031`` (``cost unknown`` when a model has no known price)."""
        tokens = f"{self.tokens:,} tokens{' (estimated)' if self.estimated else ''}"
        if self.cost_usd is None:
            return f"{tokens} · cost unknown"
        return f"{tokens} · {'free' if self.cost_usd == 0 else f'${self.cost_usd:.4f}'}"

    @staticmethod
    def total(usages: Iterable[Usage]) -> Usage:
        return sum(usages, Usage(0, 0))


@dataclass(frozen=True)
class Finish:
    """The end of one backend call: ``stop``, ``tool_calls``, ``length`` or ``error``."""

    reason: str


@dataclass(frozen=True)
class ReasoningState:
    """A provider's own record of the model's reasoning (OpenAI's Responses API reasoning item, with its
    encrypted content), to be given back to that provider in the calls that follow."""

    item: dict[str, Any]


@dataclass(frozen=True)
class ServerToolUse:
    """A tool the provider ran itself (its web search, its code interpreter): what it was asked, and a
    line of what came of it."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    summary: str
    ok: bool = True


StreamEvent = TextDelta | ReasoningDelta | ToolCall | Usage | Finish | ReasoningState | ServerToolUse

TextKind = Literal["content", "reasoning", "presentation", "evaluation"]
"""How an agent's text is shown; ``presentation`` is the final answer as it streams to stdout."""
AgentState = Literal["working", "answered", "restarted", "done", "failed"]
"""The states an ``AgentStatus`` reports; a vote is a ``VoteCast`` of its own."""
NoticeLevel = Literal["debug", "info", "warning", "degraded", "error"]
LookupReason = Literal["turn_start", "after_compression", "after_restart", "step"]
"""Why an agent looked long-term memory up (see ``MemoryRetrieved``)."""


@dataclass(frozen=True)
class AgentText:
    """An agent streamed text."""

    agent_id: str
    text: str
    kind: TextKind = "content"


@dataclass(frozen=True)
class AgentStatus:
    """An agent changed state: ``working``, ``answered`` (``detail``: the answer), ``restarted``, ``done``,
    ``failed`` (``detail``: why)."""

    agent_id: str
    status: AgentState
    detail: str = ""


@dataclass(frozen=True)
class VoteCast:
    """``voter`` voted for ``target`` (real agent ids) for ``reason``: the agent's status is now voted. Its
    own event, so every reader has the target and the reason as they were, never parsed out of a line."""

    voter: str
    target: str
    reason: str = ""


@dataclass(frozen=True)
class Notice:
    """A line worth showing the user (a warning, a retry, a limit reached). ``degraded`` says the run
    works differently because a part failed (shown even with --quiet)."""

    level: NoticeLevel
    message: str


@dataclass(frozen=True)
class ContextStatus:
    """How full an agent's context window is with a request (counted as it goes out when far from full;
    estimated at about four characters a token when far enough that the count decides nothing)."""

    agent_id: str
    turn: int
    tokens: int
    window: int
    estimated: bool = False


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
    is the result on one line, cut short (a command's: its exit code and first lines of output);
    ``chars`` the result's length."""

    agent_id: str
    call_id: str
    name: str
    ok: bool
    seconds: float
    summary: str
    chars: int


MEMORY_TEXT_CHARS = 500
"""The most characters of a memory's text a memory event carries (the store keeps it whole)."""
QUERY_CHARS = 300
"""The most characters of a retrieval's query a ``MemoryRetrieved`` carries."""


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class RetrievedMemory:
    """One memory a lookup put in front of an agent; ``owner``, ``session_id`` and ``turn`` are those of
    the source it is attributed to (``[From owner Turn turn]``); ``text`` is cut at 500 characters."""

    id: str
    text: str
    score: float
    owner: str
    session_id: str
    turn: int

    def __post_init__(self) -> None:  # bounded here, so no event carries a whole long memory
        object.__setattr__(self, "text", _clip(self.text, MEMORY_TEXT_CHARS))


@dataclass(frozen=True)
class MemoryRetrieved:
    """An agent looked long-term memory up: ``reason`` (``turn_start``, ``after_compression``,
    ``after_restart``, ``step``), the query (cut at 300 characters), and the memories injected (those that
    fit the token budget; empty when none were found)."""

    agent_id: str
    reason: LookupReason
    query: str
    memories: list[RetrievedMemory] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "query", _clip(self.query, QUERY_CHARS))


@dataclass(frozen=True)
class RecordedMemory:
    """One memory a recording stored: ``new`` when the recording created it, false when the memory was
    known and got this recording as another source; ``text`` is cut at 500 characters."""

    memory_id: str
    key: str
    text: str
    new: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _clip(self.text, MEMORY_TEXT_CHARS))


@dataclass(frozen=True)
class MemoryRecorded:
    """A recording of an agent's words to long-term memory finished (in the background, or a
    ``memory_save``): the memories it stored."""

    agent_id: str
    records: list[RecordedMemory] = field(default_factory=list)


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
    timed_out: bool = False
    """The turn was ended by its time limit (with the best answer so far, or none)."""


@dataclass(frozen=True)
class AgentUsage:
    """What one backend call of an agent spent (tokens and cost), as it ends (or is cancelled)."""

    agent_id: str
    usage: Usage


RunEvent = (
    AgentText
    | AgentStatus
    | VoteCast
    | ContextStatus
    | Notice
    | ToolStarted
    | ToolFinished
    | MemoryRetrieved
    | MemoryRecorded
    | FinalAnswer
    | AgentUsage
    | TurnEnded
)


def event_to_dict(event: StreamEvent | RunEvent) -> dict[str, Any]:
    """The JSON form of an event: its fields plus ``type``."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


_RUN_EVENTS: dict[str, type] = {kind.__name__: kind for kind in get_args(RunEvent)}


def event_from_dict(data: Mapping[str, Any]) -> RunEvent:
    """The run event whose JSON form (``event_to_dict``'s, as a log line holds it) ``data`` is, nested
    types included. Keys that are no field (a log line's ``time``) are left out; a field an older line
    lacks takes its default. A ``ValueError`` says why ``data`` is no event of this vocabulary."""
    kind = _RUN_EVENTS.get(str(data.get("type")))
    if kind is None:
        raise ValueError(f"no run event is of type {data.get('type')!r}")
    event: RunEvent = _build(kind, data)
    return event


def _build(kind: type, data: Any) -> Any:
    """A ``kind`` dataclass from the fields ``data`` holds, each decoded as its annotation says."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{kind.__name__} is not an object: {data!r}")
    fields = dataclasses.fields(kind)
    if missing := [f.name for f in fields if f.name not in data and _required(f)]:
        raise ValueError(f"{kind.__name__} lacks {', '.join(missing)}")
    hints = _hints(kind)
    return kind(**{f.name: _decode(hints[f.name], data[f.name]) for f in fields if f.name in data})


@cache
def _hints(kind: type) -> dict[str, Any]:
    return get_type_hints(kind)


def _required(item: dataclasses.Field[Any]) -> bool:
    return item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING


def _decode(hint: Any, value: Any) -> Any:
    """``value``, as JSON holds it, checked against (and made) the type ``hint`` names."""
    origin, args = get_origin(hint), get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value)
    if origin in (Union, types.UnionType):
        for arm in args:
            with contextlib.suppress(ValueError):
                return _decode(arm, value)
    elif origin is list and isinstance(value, list):
        return [_decode(args[0], item) for item in value]
    elif origin is dict and isinstance(value, dict):
        return {key: _decode(args[1], item) for key, item in value.items()}  # JSON's keys are strings
    elif hint is Any or (origin is Literal and value in args) or _is_a(value, hint):
        return float(value) if hint is float else value
    raise ValueError(f"{value!r} is not a {hint}")


def _is_a(value: Any, hint: Any) -> bool:
    """JSON's scalars: an integer is a float too; a boolean is no integer."""
    accepted = (int, float) if hint is float else hint
    return (
        isinstance(hint, type) and isinstance(value, accepted) and (hint is bool or type(value) is not bool)
    )


Listener = Callable[[RunEvent], None]


class EventSink:
    """Where every event of a run goes: each listener in turn (the console view, the run log, the ledger).
    Built first, then passed to everything that emits; emitting is only emitting."""

    def __init__(self, *listeners: Listener):
        self._listeners = list(listeners)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def __call__(self, event: RunEvent) -> None:
        for listener in self._listeners:
            listener(event)

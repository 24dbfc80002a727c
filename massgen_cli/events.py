"""The closed vocabulary of typed events. Backends yield stream events; the runner turns them into run
events. The same events feed the console, the JSON logs (``events_json``) and the tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from massgen_cli import feature_events as features
from massgen_cli.provider_events import BreakerChanged, RateLimitWait


@dataclass(frozen=True)
class TextDelta:
    text: str
    """A piece of the answer text."""


@dataclass(frozen=True)
class ReasoningDelta:
    text: str
    """A piece of the model's visible reasoning."""


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
        return asdict(self) | {"cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6)}

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
    reason: str
    """The end of one backend call: ``stop``, ``tool_calls``, ``length`` or ``error``."""


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
CommandEnd = Literal["exited", "refused", "timed_out", "failed"]
"""How an agent's shell command ended: it ran to its exit code, was refused before it ran (a blocked
pattern, a bad argument), was killed at its timeout, or could not go on (it broke the sandbox's limits)."""


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


COMMAND_CHARS = 500
"""The most characters of a command line a ``CommandRan`` carries."""
MEMORY_TEXT_CHARS = 500
"""The most characters of a memory's text a memory event carries (the store keeps it whole)."""
QUERY_CHARS = 300
"""The most characters of a retrieval's query a ``MemoryRetrieved`` carries."""


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


LIVE_LINES = 8
"""The most lines of a running command's output a ``CommandOutput`` carries."""
LIVE_LINE_CHARS = 200
"""The most characters of one of those lines."""


@dataclass(frozen=True)
class CommandOutput:
    """What a running command (the command tool) printed so far: its last finished lines (at most
    ``LIVE_LINES``, each cut at ``LIVE_LINE_CHARS``, terminal escape codes stripped, secrets redacted),
    the line it is writing (``unfinished``) and how many lines it has finished in all. Sent at most a few
    times a second while it runs; the command's whole output is its tool result."""

    agent_id: str
    call_id: str
    command: str
    lines: tuple[str, ...]
    unfinished: str
    finished_lines: int


@dataclass(frozen=True)
class CommandRan:
    """An agent's shell command (the command tool) ended: the command line (on one line, cut at 500
    characters), how it ended, its exit code (None unless it exited) and how long it took. It comes just
    before the call's ``ToolFinished``; the console, ``logs show`` and the report say it as ``describe``."""

    agent_id: str
    call_id: str
    command: str
    end: CommandEnd
    exit_code: int | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "command", _clip(" ".join(self.command.split()), COMMAND_CHARS))

    def describe(self, command_chars: int = COMMAND_CHARS) -> str:
        """``$ make test → exit 0`` (or ``→ refused``, ``→ timed out``, ``→ failed``), the command cut at
        ``command_chars`` characters."""
        status = f"exit {self.exit_code}" if self.end == "exited" else self.end.replace("_", " ")
        return f"$ {_clip(self.command, command_chars)} → {status}"


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


STEERING_CHARS = 4000  # the most characters a ``SteeringMessage`` carries (as many as a run takes)


@dataclass(frozen=True)
class SteeringMessage:
    """A message a person sent the run while it worked (the web view's steering) reached the agents: the
    first step to begin after it came carries it, as every later one does (``read``: False when it came
    after the turn's last step began, told as the turn ends: no agent read it)."""

    text: str
    read: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _clip(self.text, STEERING_CHARS))


@dataclass(frozen=True)
class TurnEnded:
    """A turn is over; ``reason`` says why (``timed_out``: its time limit ended it, answered or not)."""

    turn: int
    reason: str
    usage: dict[str, Usage] = field(default_factory=dict)
    winner: str | None = None
    votes: dict[str, int] = field(default_factory=dict)
    timed_out: bool = False


@dataclass(frozen=True)
class AgentUsage:
    """What one backend call of an agent spent (tokens and cost), as it ends (or is cancelled); ``via``:
    the agent's subagent whose call it was (``research/deeper`` further down), counted as the agent's."""

    agent_id: str
    usage: Usage
    via: str = ""


RunEvent = (
    AgentText
    | AgentStatus
    | VoteCast
    | ContextStatus
    | Notice
    | ToolStarted
    | ToolFinished
    | CommandRan
    | CommandOutput
    | MemoryRetrieved
    | MemoryRecorded
    | FinalAnswer
    | AgentUsage
    | SteeringMessage
    | RateLimitWait
    | BreakerChanged
    | features.HookDecided
    | features.SubagentStarted
    | features.SubagentFinished
    | features.PlanMade
    | features.ChecklistJudged
    | TurnEnded
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

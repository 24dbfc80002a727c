"""The one backend protocol: an async stream of typed events for one request."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from massgen_cli.attachments import Kind
from massgen_cli.errors import ConfigError
from massgen_cli.events import (
    Finish,
    ReasoningDelta,
    ReasoningState,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.config.backend import BackendConfig


def named_model(config: BackendConfig, default_name: str, hint: str) -> tuple[str, str]:
    """A provider backend's name (its ``type``, else ``default_name``) and model; a ``ConfigError`` that
    ends with ``hint`` (an example model) when the config names none."""
    name = config.type or default_name
    if not config.model:
        raise ConfigError(f"backend '{name}' needs 'model'{hint}")
    return name, config.model


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call: a name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


Purpose = Literal["coordination", "answer", "presentation", "final_answer", "post_evaluation", "summary"]
"""Why a request is sent: a coordination step, an agent's own answer, the winner's presentation (which
post-evaluation may still reject), the turn's final answer as it comes (streamed to stdout), a
post-evaluation, or a compression's summary."""


@dataclass(frozen=True)
class Request:
    """What one backend call sends.

    ``messages`` are in the OpenAI chat format (roles system/user/assistant/tool). ``response_schema``
    asks for a JSON answer that matches the schema, for backends without tool calls.
    """

    messages: list[Message]
    tools: tuple[ToolSpec, ...] = ()
    response_schema: dict[str, Any] | None = None
    purpose: Purpose = "answer"

    def offers_tool(self, name: str) -> bool:
        return any(tool.name == name for tool in self.tools)


TEXT_ONLY: frozenset[Kind] = frozenset({"text"})
EVERY_KIND: frozenset[Kind] = frozenset({"image", "pdf", "text"})


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, so callers pick tool calls or a JSON schema for decisions, and which
    attachments its requests may carry (a text file goes to every model, as text)."""

    tool_calls: bool = True
    json_schema: bool = True
    reasoning: bool = False
    attachments: frozenset[Kind] = TEXT_ONLY


@runtime_checkable
class Backend(Protocol):
    """An LLM provider. ``stream`` yields text, reasoning, tool calls, usage and a final Finish."""

    name: str
    model: str
    capabilities: Capabilities

    def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]: ...

    async def aclose(self) -> None: ...


@dataclass
class Completion:
    """The whole result of one call, gathered from its stream."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage(0, 0))
    finish_reason: str = ""
    reasoning_items: list[dict[str, Any]] = field(default_factory=list)
    """The provider's reasoning records, given back to it with this reply in later calls."""
    received: int = 0
    """How many stream events came (none: the provider never answered)."""

    def add(self, event: StreamEvent) -> None:
        """Fold one stream event into the result."""
        self.received += 1
        if isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, ReasoningDelta):
            self.reasoning += event.text
        elif isinstance(event, ToolCall):
            self.tool_calls.append(event)
        elif isinstance(event, Usage):
            self.usage = self.usage + event
        elif isinstance(event, Finish):
            self.finish_reason = event.reason
        elif isinstance(event, ReasoningState):
            self.reasoning_items.append(event.item)


async def complete(backend: Backend, request: Request) -> Completion:
    """The non-streaming call, derived from the stream."""
    result = Completion()
    async for event in backend.stream(request):
        result.add(event)
    return result

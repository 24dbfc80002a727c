"""An agent is data: an id, its config, its backend, its context guard, its toolbox and the hooks its
requests pass; and the messages a step leaves in its thread."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.backends.base import Backend, Completion, Purpose, Request
from massgen_cli.config.schema import AgentConfig
from massgen_cli.events import RunEvent, TextKind, ToolCall
from massgen_cli.memory.context.guard import ContextGuard, DroppedListener
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.messages import Message, ToolCallPart
from massgen_cli.tools.attachments import AgentMedia
from massgen_cli.tools.toolbox import Toolbox, ToolResult

Emit = Callable[[RunEvent], None]
CompressedListener = Callable[[list[Message]], Awaitable[None]]


class StepRefused(Exception):
    """A request hook refused the step: the run may not take it (the message says why, whole). The turn
    ends the agent's attempt on it as the hook's reason, without knowing which hook it was (the
    spending caps' ``SpendingCapReached`` is one)."""


class RequestHooks:
    """What sees every request of an agent's steps, called from one place in the request path
    (``agent.pipeline.run_step``): ``before_request`` may change the request (or refuse it, raising
    ``StepRefused``, or wait), ``after_response`` hears the completion, ``request_failed`` a request
    that raised (cancelled included) after the hooks let it go — those two in the reverse order, the
    last hook to let a request go hearing first how it ended; and every tool call of its steps, called from
    one place in the tool loop (``agent.tool_calls.run_tool``): ``before_tool`` may change the call or
    stand in for its result, ``after_tool`` may change the result. Each does nothing unless overridden; step
    extensions are request hooks too."""

    async def before_request(self, agent_id: str, request: Request) -> Request:
        """The request to send instead of ``request`` (the same one by default)."""
        return request

    async def after_response(self, agent_id: str, request: Request, completion: Completion) -> None:
        """``request`` (as it was sent, before fitting) completed with ``completion``."""

    async def request_failed(
        self, agent_id: str, request: Request, error: BaseException
    ) -> BaseException | None:
        """``request`` raised ``error`` (a provider's error, a cancellation, a hook's refusal); the error
        the step raises instead (a cancellation this hook made, told as what it means), or None."""
        return None

    async def before_tool(self, agent_id: str, call: ToolCall) -> ToolCall | ToolResult:
        """The call to run instead of ``call`` (the same one by default), or a result that stands for it
        (the call is then not run)."""
        return call

    async def after_tool(self, agent_id: str, call: ToolCall, result: ToolResult) -> ToolResult:
        """The result the model reads instead of ``result`` (the same one by default)."""
        return result


FINAL_ANSWER: Purpose = "final_answer"
"""The purpose of a request whose reply is the turn's final answer (a presentation, or a lone agent's
answer, that no post-evaluation can reject): its text streams to stdout as it comes."""


@dataclass(frozen=True)
class Agent:
    """One configured agent, the backend it talks to, and the guard of its context window; fixed once
    built (its toolbox gains the MCP servers' tools when they start)."""

    id: str
    config: AgentConfig
    backend: Backend
    guard: ContextGuard | None = None
    summary_backend: Backend | None = None
    toolbox: Toolbox = field(default_factory=Toolbox)
    pricing: set[asyncio.Task[None]] = field(default_factory=set)
    """Calls still being priced (in a thread, while the price library loads)."""
    media: AgentMedia | None = None
    """The images and files its questions carry (its config's, and those a question names)."""
    hooks: tuple[RequestHooks, ...] = ()
    """What sees each request of its steps, in order (the run's features)."""

    async def settled(self) -> None:
        """Wait until every call's usage, priced, and every request's context count has been emitted."""
        while self.pricing:
            await asyncio.gather(*self.pricing, return_exceptions=True)
        if self.guard is not None:
            await self.guard.counted()

    @property
    def workspace(self) -> Path | None:
        """The agent's own workspace (``backend.cwd``), if it has one."""
        roots = self.toolbox.roots
        return roots.base if roots is not None and self.config.backend.cwd is not None else None

    def history(self, threads: AgentThreads) -> list[Message]:
        """The agent's earlier turns, unless its ``memory.conversation_memory`` is off."""
        memory = self.config.memory
        return threads.get_history(self.id) if memory is None or memory.conversation_memory.enabled else []


@dataclass(frozen=True)
class AgentParts:
    """What an agent is given beyond its config: its toolbox, where compression hands what it drops
    (long-term memory, when it is on for the agent), and the runner's state folder (no question may name
    a file in it)."""

    toolbox: Toolbox
    keeper: DroppedListener | None = None
    state_folder: Path | None = None
    hooks: tuple[RequestHooks, ...] = ()


def text_kind(request: Request) -> TextKind:
    """How the text of a reply to ``request`` is shown: ``presentation`` (the final answer, on stdout) for
    a final answer's request that offers no tools and asks for no JSON (text before a tool call, or JSON,
    is no answer), ``evaluation`` for a post-evaluation, else ``content``."""
    if request.purpose == FINAL_ANSWER and not request.tools and request.response_schema is None:
        return "presentation"
    return "evaluation" if request.purpose == "post_evaluation" else "content"


def assistant_echo(completion: Completion) -> Message:
    """The assistant message a step produced, to show the model before a re-ask."""
    return with_reasoning({"role": "assistant", "content": completion.text or "(no text)"}, completion)


def with_reasoning(message: Message, completion: Completion) -> Message:
    """``message`` with the provider's reasoning records of ``completion``, to give back in later calls."""
    if completion.reasoning_items:
        message["reasoning_items"] = list(completion.reasoning_items)
    return message


def decision_transcript(completion: Completion, result_text: str) -> list[Message]:
    """The assistant message with its tool calls, and the tool results, as a thread keeps them."""
    if not completion.tool_calls:
        return []
    calls: list[ToolCallPart] = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in completion.tool_calls
    ]
    results: list[Message] = [
        {"role": "tool", "tool_call_id": call.id, "content": result_text} for call in completion.tool_calls
    ]
    assistant: Message = {"role": "assistant", "content": completion.text or None, "tool_calls": calls}
    return [with_reasoning(assistant, completion), *results]

"""Agents are data: an id, its config, its backend and its context guard. One step is one backend
call, streamed; the guard fits the request into the context window first."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.backends.attachment_parts import refuses_attachments, text_only
from massgen_cli.backends.base import Backend, Completion, Purpose, Request
from massgen_cli.backends.pricing import library_ready, needs_library, priced
from massgen_cli.backends.registry import create_backend
from massgen_cli.backends.stream_failures import MalformedResponseError
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.errors import BackendError, ContextLengthError
from massgen_cli.events import (
    AgentText,
    AgentUsage,
    Notice,
    ReasoningDelta,
    RunEvent,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    TextKind,
    ToolFinished,
    ToolStarted,
    Usage,
)
from massgen_cli.memory.context.compression import Summarizer
from massgen_cli.memory.context.guard import (
    ContextGuard,
    DropHandling,
    DroppedListener,
    backend_summarizer,
    build_guard,
)
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.messages import Message, ToolCallPart, recordable
from massgen_cli.runlogs.writer import AttemptLog
from massgen_cli.tokens import estimate_message_tokens, estimate_text_tokens
from massgen_cli.tools.agent_model import Ask
from massgen_cli.tools.attachments import AgentMedia, question_roots
from massgen_cli.tools.toolbox import Toolbox, build_toolbox
from massgen_cli.tools.uploads import agent_media

Emit = Callable[[RunEvent], None]
CompressedListener = Callable[[list[Message]], Awaitable[None]]

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


def build_agents(
    config: MassGenConfig, emit: Emit, parts: Mapping[str, AgentParts] | None = None
) -> list[Agent]:
    """Backends, guards and toolboxes for every agent, in registration order (retries are reported via
    ``emit``); ``parts`` gives each agent its toolbox (else the config's tools alone) and keeper."""
    agents = []
    for index, agent_config in enumerate(config.agents):
        agent_id = agent_config.id or ""
        given = (parts or {}).get(agent_id)
        if given is None:
            given = AgentParts(build_toolbox(agent_config, index, config.orchestrator))

        def on_retry(error: BackendError, attempt: int, delay: float, agent_id: str = agent_id) -> None:
            emit(Notice("warning", f"[{agent_id}] {error}; retry {attempt} in {delay:.1f}s"))

        backend = create_backend(agent_config.backend, on_retry=on_retry)
        summary_config = _summary_config(agent_config)
        summary = (create_backend(summary_config), summary_config) if summary_config is not None else None
        summary_backend = summary[0] if summary is not None else None
        summarizer = _summarizer(agent_config, backend, summary, _summary_usage(agent_id, emit))
        guard = _guard(agent_config, backend, DropHandling(summarizer, given.keeper), emit)
        media = _media(config, index, backend, given, emit)
        agent = Agent(agent_id, agent_config, backend, guard, summary_backend, given.toolbox, media=media)
        given.toolbox.model.bind(backend, _asked_aside(agent, emit))
        agents.append(agent)
    return agents


def _asked_aside(agent: Agent, emit: Emit) -> Ask:
    """How the agent's tools ask its model something (to look at an image): the call is not shown, and
    what it spends is the agent's, as a step's is."""

    async def gather(request: Request, result: Completion) -> None:
        async with contextlib.aclosing(agent.backend.stream(request)) as events:
            async for event in events:
                result.add(event)

    return lambda request: _accounted(agent, request, emit, gather)


def _media(config: MassGenConfig, index: int, backend: Backend, given: AgentParts, emit: Emit) -> AgentMedia:
    """The agent's attachments: its config's, read now (an upload that cannot be sent stops the start;
    what else is not sent is said once, for the whole run)."""
    roots = question_roots(given.toolbox.roots, given.state_folder)
    media, warnings = agent_media(config.agents[index], index, config.orchestrator, backend, roots)
    for warning in warnings:
        emit(Notice("warning", warning))
    return media


def _summary_config(agent_config: AgentConfig) -> BackendConfig | None:
    """The backend config of a configured summariser (``memory.compression.summarizer``)."""
    endpoint = agent_config.memory.compression.summarizer if agent_config.memory else None
    if endpoint is None:
        return None
    return BackendConfig(
        type=endpoint.provider, model=endpoint.model, api_key=endpoint.api_key, base_url=endpoint.base_url
    )


def _guard(agent_config: AgentConfig, backend: Backend, dropped: DropHandling, emit: Emit) -> ContextGuard:
    memory = agent_config.memory
    assert memory is not None, "the loader sets each agent's effective memory"
    window = agent_config.context_window or getattr(backend, "context_window", None)
    return build_guard(
        agent_config.id or "",
        backend.model,
        window,
        memory.compression,
        emit=emit,
        dropped=dropped,
        max_output_tokens=agent_config.backend.max_tokens,
    )


def _summarizer(
    agent_config: AgentConfig,
    backend: Backend,
    summary: tuple[Backend, BackendConfig] | None,
    on_usage: Callable[[Usage, BackendConfig], None],
) -> Summarizer | None:
    """The configured summariser (``summary``: its backend and config), else the agent's own backend;
    scripted agents use extraction. What a summary spends goes to ``on_usage``, priced as the backend
    that made it."""
    if summary is None and agent_config.backend.type == "scripted":
        return None
    summarize_with, config = summary or (backend, agent_config.backend)
    return backend_summarizer(summarize_with, lambda spent: on_usage(spent, config))


def _summary_usage(agent_id: str, emit: Emit) -> Callable[[Usage, BackendConfig], None]:
    """The agent's usage event for a summary its compression asked for (counted in its tokens and cost)."""
    return lambda spent, config: emit(AgentUsage(agent_id, priced(spent, config)))


def text_kind(request: Request) -> TextKind:
    """How the text of a reply to ``request`` is shown: ``presentation`` (the final answer, on stdout) for
    a final answer's request that offers no tools and asks for no JSON (text before a tool call, or JSON,
    is no answer), ``evaluation`` for a post-evaluation, else ``content``."""
    if request.purpose == FINAL_ANSWER and not request.tools and request.response_schema is None:
        return "presentation"
    return "evaluation" if request.purpose == "post_evaluation" else "content"


async def run_step(
    agent: Agent,
    request: Request,
    emit: Emit,
    log: AttemptLog | None,
    *,
    on_compressed: CompressedListener | None = None,
) -> Completion:
    """Fit, send and stream one request; after a context-length error, shrink it and send it once more;
    after a server refused the images and files it carries, send it once more with the text only."""
    if agent.guard is not None:
        fitted = await agent.guard.fit(request)
        if fitted is not request and on_compressed is not None:
            await on_compressed(fitted.messages)
        request = fitted
    media = agent.media
    if media is not None and media.refused:
        request = text_only(request)
    try:
        return await _stream(agent, request, emit, log)
    except ContextLengthError:
        if agent.guard is None:
            raise
        return await _stream(agent, await agent.guard.shrink(request), emit, log)
    except BackendError as error:
        if media is None or not refuses_attachments(error, request):
            raise
        media.refused = True  # for the rest of the run: the server will not read them
        emit(Notice("warning", f"{agent.id}: {error}; asked again without images and files, for this run"))
        return await _stream(agent, text_only(request), emit, log)


async def _stream(agent: Agent, request: Request, emit: Emit, log: AttemptLog | None) -> Completion:
    if log is not None:
        log.request(agent.id, _request_record(agent, request))
    return await _accounted(agent, request, emit, lambda sent, result: _consume(agent, sent, result, emit))


async def _accounted(
    agent: Agent, request: Request, emit: Emit, consume: Callable[[Request, Completion], Awaitable[None]]
) -> Completion:
    """``request``'s completion, as ``consume`` gathers it from the agent's backend; what it spent is
    emitted as the agent's usage, whether it completed, failed or was cancelled."""
    result = Completion()
    try:
        await consume(request, result)
    except Exception:  # a failed call spent what came back; one that got no response at all spent nothing
        if result.received:
            _account(agent, _reported_or_estimated(agent, request, result), emit)
        raise
    except BaseException:  # a cancelled call (a restart, Ctrl-C) spent what was sent and what came back
        _account(agent, _reported_or_estimated(agent, request, result), emit)
        raise
    _account(agent, _reported_or_estimated(agent, request, result), emit)
    return result


def _account(agent: Agent, spent: Usage, emit: Emit) -> None:
    """Emit a call's usage, priced. Loading the price library takes a third of a second: until it is
    loaded, pricing runs in a thread and the loop goes on (``Agent.settled`` waits for it)."""
    backend = agent.config.backend
    if library_ready() or not needs_library(backend):
        emit(AgentUsage(agent.id, priced(spent, backend)))
        return
    task = asyncio.get_running_loop().create_task(_price_in_thread(agent, spent, emit))
    agent.pricing.add(task)
    task.add_done_callback(agent.pricing.discard)


async def _price_in_thread(agent: Agent, spent: Usage, emit: Emit) -> None:
    emit(AgentUsage(agent.id, await asyncio.to_thread(priced, spent, agent.config.backend)))


def _reported_or_estimated(agent: Agent, request: Request, result: Completion) -> Usage:
    """The provider's usage; when it reported none, the request and what came back, counted here."""
    if result.usage.tokens:
        return result.usage
    model = agent.backend.model
    output = (
        result.text + result.reasoning + "".join(json.dumps(call.arguments) for call in result.tool_calls)
    )
    return Usage(
        estimate_message_tokens(request.messages, model), estimate_text_tokens(output, model), estimated=True
    )


async def _consume(agent: Agent, request: Request, result: Completion, emit: Emit) -> None:
    guard, kind = agent.guard, text_kind(request)
    budget = guard.stream_budget(request) if guard is not None else None
    try:
        async with contextlib.aclosing(agent.backend.stream(request)) as events:
            async for event in events:
                if guard is not None:
                    guard.sent()
                _refuse_oversized(agent, result, event)
                result.add(event)
                if isinstance(event, ReasoningDelta):
                    emit(AgentText(agent.id, event.text, "reasoning"))
                if isinstance(event, ServerToolUse):
                    _report_server_tool(agent.id, event, emit)
                if not isinstance(event, TextDelta):
                    continue
                emit(AgentText(agent.id, event.text, kind))
                if budget is not None and guard is not None:
                    budget.add(event.text, agent.backend.model)
                    if not guard.check_stream(budget):
                        result.finish_reason = "length"
                        return
    finally:
        if guard is not None:
            guard.sent()


MAX_RESPONSE_CHARS = 2_000_000
"""The most text and reasoning one response may bring (about half a million tokens, beyond any model's
output limit): a provider that sends more is failing, and holding it would cost the run its memory."""


def _refuse_oversized(agent: Agent, result: Completion, event: StreamEvent) -> None:
    """A ``MalformedResponseError`` before ``event`` would take the response over its bound."""
    adds = len(event.text) if isinstance(event, TextDelta | ReasoningDelta) else 0
    if adds and len(result.text) + len(result.reasoning) + adds > MAX_RESPONSE_CHARS:
        name = agent.backend.name
        raise MalformedResponseError(
            f"{name} sent over {MAX_RESPONSE_CHARS:,} characters in one response; the rest was not read",
            provider=name,
        )


def _report_server_tool(agent_id: str, use: ServerToolUse, emit: Emit) -> None:
    """A tool the provider ran (its web search, its code interpreter), shown and logged like ours."""
    emit(ToolStarted(agent_id, use.call_id, use.name, use.arguments))
    emit(ToolFinished(agent_id, use.call_id, use.name, use.ok, 0.0, use.summary, len(use.summary)))


def _request_record(agent: Agent, request: Request) -> dict[str, object]:
    return {
        "agent_id": agent.id,
        "backend": agent.backend.name,
        "model": agent.backend.model,
        "purpose": request.purpose,
        "messages": [recordable(message) for message in request.messages],
        "tools": [tool.name for tool in request.tools],
        "response_schema": request.response_schema,
    }


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

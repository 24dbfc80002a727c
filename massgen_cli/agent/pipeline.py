"""The request path of one agent's step, stage by stage: the agent's request hooks see it first
(``before_request``), it is fitted into the context window, logged, sent, its reply streamed (shown as
it comes, bounded), what it spent accounted, and the hooks hear the completion (``after_response``,
the last hook first).
After a context-length error it is shrunk and sent once more, after a refusal of its images and files
it is sent with the text only."""

from __future__ import annotations

import contextlib

from massgen_cli.agent.data import Agent, CompressedListener, Emit, RequestHooks, text_kind
from massgen_cli.agent.pricing import accounted
from massgen_cli.backends.attachment_parts import refuses_attachments, text_only
from massgen_cli.backends.base import Completion, Request
from massgen_cli.backends.stream_failures import MalformedResponseError
from massgen_cli.errors import BackendError, ContextLengthError
from massgen_cli.events import (
    AgentText,
    Notice,
    ReasoningDelta,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from massgen_cli.messages import recordable
from massgen_cli.runlogs.writer import AttemptLog


async def run_step(
    agent: Agent,
    request: Request,
    emit: Emit,
    log: AttemptLog | None,
    *,
    on_compressed: CompressedListener | None = None,
) -> Completion:
    """One request through the agent's hooks, fitted, sent and streamed (see the module docstring)."""
    admitted: list[RequestHooks] = []
    try:
        for hook in agent.hooks:
            request = await hook.before_request(agent.id, request)
            admitted.append(hook)
        completion = await _fit_and_send(agent, request, emit, log, on_compressed)
    except BaseException as error:
        instead = None
        for hook in reversed(admitted):
            instead = await hook.request_failed(agent.id, request, error) or instead
        if instead is not None:
            raise instead from error
        raise
    for hook in reversed(agent.hooks):
        await hook.after_response(agent.id, request, completion)
    return completion


async def _fit_and_send(
    agent: Agent,
    request: Request,
    emit: Emit,
    log: AttemptLog | None,
    on_compressed: CompressedListener | None,
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
    return await accounted(agent, request, emit, lambda sent, result: _consume(agent, sent, result, emit))


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

"""The spans of agents' steps and model calls, as the step-extension protocol sees them: a step begins
when its system prompt is assembled and ends when it decides (or fails, is restarted, or the attempt
ends); each request of a step is a ``chat`` span under it, with the GenAI semantic conventions'
attributes (provider, model, request settings, tokens used, finish reason) and, when asked, the messages
themselves (``content.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, ClassVar

from opentelemetry.trace import Span, SpanKind

from massgen_cli.backends.base import Completion, Request
from massgen_cli.coordination.extension import StepAt, StepDone, StepExtension
from massgen_cli.features.traces.content import input_attributes, output_attributes
from massgen_cli.features.traces.tree import SpanTree, end

CALL: ContextVar[Span | None] = ContextVar("traced_model_call", default=None)
"""The model call under way in this task (each agent's steps run in a task of their own)."""
DECISIONS = ("new_answer", "vote")


class CallSpans(StepExtension):
    """Step and model-call spans (see the module docstring); ``models``: each agent's call attributes."""

    name: ClassVar[str] = "telemetry"

    def __init__(
        self, tree: SpanTree, models: Mapping[str, Mapping[str, Any]], *, with_content: bool = False
    ):
        self.tree, self.models, self.with_content = tree, models, with_content

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        self.tree.end_step(at.agent_id, "superseded")
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": at.agent_id,
            "gen_ai.agent.id": at.agent_id,
            "massgen.turn": at.turn,
            "massgen.attempt": at.attempt,
            "massgen.step.kind": "coordination" if with_peers else "answer",
        }
        parent = self.tree.attempt or self.tree.turn
        self.tree.steps[at.agent_id] = self.tree.start(f"invoke_agent {at.agent_id}", parent, attributes)
        return ""

    async def decided(self, done: StepDone) -> None:
        step = self.tree.steps.get(done.at.agent_id)
        if step is not None:
            step.set_attribute("massgen.decision", _decision(done))
            if done.tools_used:
                step.set_attribute("massgen.tools_used", done.tools_used)
        self.tree.end_step(done.at.agent_id, "decided")

    async def before_request(self, agent_id: str, request: Request) -> Request:
        model = self.models.get(agent_id, {})
        attributes = {**model, "massgen.purpose": request.purpose, "massgen.tools": len(request.tools)}
        if self.with_content:
            attributes |= input_attributes(request.messages)
        name = f"chat {model.get('gen_ai.request.model', '')}".strip()
        CALL.set(self.tree.start(name, self.tree.under(agent_id), attributes, SpanKind.CLIENT))
        return request

    async def after_response(self, agent_id: str, request: Request, completion: Completion) -> None:
        span, usage = CALL.get(), completion.usage
        if span is None:
            return
        CALL.set(None)
        span.set_attributes(
            {
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
                "gen_ai.response.model": self.models.get(agent_id, {}).get("gen_ai.request.model", ""),
                "gen_ai.response.finish_reasons": [completion.finish_reason or "stop"],
                "massgen.tool_calls": len(completion.tool_calls),
            }
        )
        if self.with_content:
            span.set_attributes(output_attributes(completion))
        span.end()

    async def request_failed(self, agent_id: str, request: Request, error: BaseException) -> None:
        span = CALL.get()
        if span is None:
            return
        CALL.set(None)
        if isinstance(error, asyncio.CancelledError):
            span.set_attribute("massgen.cancelled", True)  # its step was cut off: no failure of the call
            span.end()
            return
        end(span, str(error) or type(error).__name__, error_type=type(error).__name__)


def _decision(done: StepDone) -> str:
    """``new_answer`` or ``vote`` (the decision's tool call), else ``answer`` (an answer as text)."""
    for message in reversed(done.messages):
        for call in message.get("tool_calls") or ():
            name = call.get("function", {}).get("name", "")
            if name in DECISIONS:
                return str(name)
    return "answer"

"""The open spans of a run, by what they stand for: its turn, its attempt, each agent's step, each tool
call; a span starts under the innermost one open above it and ends once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

Attributes = Mapping[str, Any]


class SpanTree:
    """The turn, the attempt, each agent's step and each tool call under way (see the module docstring)."""

    def __init__(self, tracer: Tracer, session_id: str):
        self.tracer, self.session_id = tracer, session_id
        self.turn: Span | None = None
        self.attempt: Span | None = None
        self.steps: dict[str, Span] = {}
        self.tools: dict[tuple[str, str], Span] = {}

    def start(
        self, name: str, parent: Span | None, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL
    ) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        known = {"gen_ai.conversation.id": self.session_id, **attributes}
        return self.tracer.start_span(name, context=context, kind=kind, attributes=_valid(known))

    def under(self, agent_id: str) -> Span | None:
        """The innermost span an agent's work goes under: its step, else the attempt, else the turn."""
        return self.steps.get(agent_id) or self.attempt or self.turn

    def end_step(self, agent_id: str, how: str, error: str = "") -> None:
        step = self.steps.pop(agent_id, None)
        if step is not None:
            step.set_attribute("massgen.step.end", how)
            end(step, error)

    def end_attempt(self, how: str, error: str = "") -> None:
        for agent_id in list(self.steps):
            self.end_step(agent_id, "attempt over")
        for key in list(self.tools):
            end(self.tools.pop(key), "the attempt ended first")
        if self.attempt is not None:
            self.attempt.set_attribute("massgen.attempt.end", how)
            end(self.attempt, error)
            self.attempt = None

    def end_turn(self, attributes: Attributes, error: str = "") -> None:
        self.end_attempt("turn over")
        if self.turn is not None:
            self.turn.set_attributes(_valid(attributes))
            end(self.turn, error)
            self.turn = None


def end(span: Span, error: str = "", *, error_type: str = "") -> None:
    """End ``span``, marked failed with ``error`` (and the ``error.type`` attribute) when there is one."""
    if error:
        span.set_status(Status(StatusCode.ERROR, error))
        span.set_attribute("error.type", error_type or "_OTHER")
    span.end()


def _valid(attributes: Attributes) -> dict[str, Any]:
    """The attributes OpenTelemetry takes: none that is None."""
    return {key: value for key, value in attributes.items() if value is not None}

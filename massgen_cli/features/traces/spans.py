"""The spans of turns, attempts and tool calls: an attempt part begins a turn's span with its first
attempt and an attempt's with each, ends an attempt's when it is committed or rolled back, and the
run's events end the rest: a ``TurnEnded`` the turn (with its winner, end reason and totals), an agent's
``failed``, ``restarted`` or ``done`` its step, a ``ToolFinished`` the tool call its ``ToolStarted``
began; a rate-limit wait or a breaker's change is an event of the call it happened in."""

from __future__ import annotations

from typing import ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.events import (
    AgentStatus,
    BreakerChanged,
    RateLimitWait,
    RunEvent,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    Usage,
)
from massgen_cli.features.traces.calls import CALL
from massgen_cli.features.traces.content import tool_arguments, tool_result
from massgen_cli.features.traces.tree import SpanTree, end

STEP_ENDS = ("failed", "restarted", "done")


class TurnSpans:
    """The attempt part that opens and closes the turn's and the attempts' spans."""

    part_name: ClassVar[str] = "telemetry"

    def __init__(self, tree: SpanTree):
        self.tree = tree

    def begin(self, at: AttemptAt) -> None:
        tree = self.tree
        if at.attempt == 1 or tree.turn is None:
            tree.end_turn({"massgen.turn.end_reason": "a new turn began"})
            tree.turn = tree.start(f"turn {at.turn}", None, {"massgen.turn": at.turn})
        tree.end_attempt("superseded")
        attributes = {"massgen.turn": at.turn, "massgen.attempt": at.attempt}
        tree.attempt = tree.start(f"attempt {at.attempt}", tree.turn, attributes)

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        if self.tree.attempt is not None:
            self.tree.attempt.set_attribute("massgen.winner", outcome.winner or "")
        self.tree.end_attempt("committed")
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        if whole_turn:
            reason = "the turn failed or was cancelled"
            self.tree.end_turn({"massgen.turn.end_reason": reason}, reason)
        else:
            self.tree.end_attempt("rejected by post-evaluation")


class EventSpans:
    """Listens to the run's events (see the module docstring)."""

    def __init__(self, tree: SpanTree, *, with_content: bool = False):
        self.tree, self.with_content = tree, with_content

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, ToolStarted):
            self._tool_started(event)
        elif isinstance(event, ToolFinished):
            span = self.tree.tools.pop((event.agent_id, event.call_id), None)
            if span is not None:
                span.set_attribute("massgen.tool.result_chars", event.chars)
                if self.with_content:
                    span.set_attribute("gen_ai.tool.call.result", tool_result(event.summary))
                failure = "" if event.ok else event.summary or "the tool call failed"
                end(span, failure, error_type="tool_error")
        elif isinstance(event, AgentStatus) and event.status in STEP_ENDS:
            self.tree.end_step(event.agent_id, event.status, event.detail if event.status == "failed" else "")
        elif isinstance(event, RateLimitWait | BreakerChanged):
            self._said_in_call(event)
        elif isinstance(event, TurnEnded):
            self.tree.end_turn(_turn_attributes(event))

    def _tool_started(self, event: ToolStarted) -> None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.agent.name": event.agent_id,
        }
        if self.with_content:
            attributes["gen_ai.tool.call.arguments"] = tool_arguments(event.arguments)
        span = self.tree.start(f"execute_tool {event.name}", self.tree.under(event.agent_id), attributes)
        self.tree.tools[(event.agent_id, event.call_id)] = span

    def _said_in_call(self, event: RateLimitWait | BreakerChanged) -> None:
        span = CALL.get() or self.tree.under(event.agent_id)
        if span is None:
            return
        details: dict[str, str | int | float]
        if isinstance(event, RateLimitWait):
            details = {"massgen.rate_limit": event.limit, "massgen.wait_s": event.seconds}
            span.add_event("rate_limit.wait", {"massgen.provider": event.provider, **details})
        else:
            details = {"massgen.breaker.state": event.state, "massgen.breaker.failures": event.failures}
            span.add_event("circuit_breaker.change", {"massgen.provider": event.provider, **details})


def _turn_attributes(event: TurnEnded) -> dict[str, object]:
    total = Usage.total(event.usage.values())
    return {
        "massgen.turn.end_reason": event.reason,
        "massgen.winner": event.winner or "",
        "massgen.timed_out": event.timed_out,
        "gen_ai.usage.input_tokens": total.input_tokens,
        "gen_ai.usage.output_tokens": total.output_tokens,
        "massgen.cost_usd": total.cost_usd,
    }

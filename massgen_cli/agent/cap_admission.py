"""The spending caps as a request hook: no request starts once a cap is spent, and while calls are under
way a new one starts only if the budget left covers them all, so agents working in parallel cannot
overshoot a cap by more than one call's worth.

Each request is estimated before it is sent (its input counted, its output as the largest reply seen so
far, priced as its agent's model when the cap is in dollars) and reserved until it ends; a request that
does not fit waits for a call under way to end, then is looked at again. With nothing under way a
request always starts while the cap is not spent: that one call is the most a cap can be overshot by.

When a call ends with the cap crossed (its reply cost more than it was expected to), the calls still
under way are stopped at once (their tasks cancelled; each step then ends as a step the cap refused, and
what those calls had sent and received is counted), and a notice says which agents' calls were stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from massgen_cli.agent.data import RequestHooks
from massgen_cli.agent.spending import SpendingCapReached, SpendingGate
from massgen_cli.backends.base import Completion, Request
from massgen_cli.events import Notice, Usage
from massgen_cli.tokens import estimate_message_tokens, estimate_text_tokens

Price = Callable[[Usage], float | None]
"""What ``usage`` costs in US dollars on one agent's model (None: unknown)."""

FIRST_REPLY_TOKENS = 1024
"""The output a request is expected to bring before any reply of the run is seen."""


@dataclass(frozen=True)
class Reserved:
    """What one request under way is expected to spend: tokens, and dollars when priced."""

    tokens: int
    cost_usd: float


class CapAdmission(RequestHooks):
    """Admits the agents' requests under the gate's caps (see the module docstring); ``prices`` prices a
    usage for each agent's model."""

    def __init__(self, gate: SpendingGate, prices: Mapping[str, Price] | None = None):
        self.gate = gate
        self.prices = dict(prices or {})
        self.under_way: dict[str, list[Reserved]] = {}
        self.largest_reply = 0
        self.calls: dict[asyncio.Task[object], str] = {}
        """The tasks whose admitted call is under way, and their agents."""
        self.stopping: dict[asyncio.Task[object], str] = {}
        """Tasks whose call was cancelled because the cap was crossed, and the cap's reason."""
        self._changed: asyncio.Condition | None = None

    async def before_request(self, agent_id: str, request: Request) -> Request:
        if not self.gate.bounded:
            return request
        changed = self._condition()
        async with changed:
            while True:
                await self.gate.check()  # a SpendingCapReached once a cap is spent
                expected = self._expected(agent_id, request)
                if not self._reserved() or self._fits(expected):
                    self.under_way.setdefault(agent_id, []).append(expected)
                    self._track(agent_id)
                    return request
                await changed.wait()

    async def after_response(self, agent_id: str, request: Request, completion: Completion) -> None:
        if not self.gate.caps:
            return
        self._untrack()  # before any wait: a call that has ended is no longer one to stop
        reply = completion.usage.output_tokens or estimate_text_tokens(completion.text + completion.reasoning)
        self.largest_reply = max(self.largest_reply, reply)
        await self._release(agent_id)
        await self._stop_calls_once_crossed()

    async def request_failed(
        self, agent_id: str, request: Request, error: BaseException
    ) -> BaseException | None:
        if not self.gate.caps:
            return None
        task = self._untrack()
        await self._release(agent_id)
        if task is None or task not in self.stopping:
            return None
        reason = self.stopping.pop(task)
        if not isinstance(error, asyncio.CancelledError):
            return None
        task.uncancel()  # the cancellation was the cap's, and ends here
        return SpendingCapReached(f"{reason}; the call under way was stopped")

    def _track(self, agent_id: str) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.calls[task] = agent_id

    def _untrack(self) -> asyncio.Task[object] | None:
        task = asyncio.current_task()
        if task is not None:
            self.calls.pop(task, None)
        return task

    async def _stop_calls_once_crossed(self) -> None:
        """Cancel the calls under way when what the run spent has crossed a cap."""
        if not self.calls:
            return
        reason = await self.gate.reason()
        stopped = sorted({agent for task, agent in self.calls.items() if task not in self.stopping})
        if not reason or not stopped:
            return
        for task in list(self.calls):
            if task not in self.stopping:
                self.stopping[task] = reason
                task.cancel()
        self.gate.emit(Notice("warning", f"{reason}: the calls under way of {', '.join(stopped)} stopped"))

    async def _release(self, agent_id: str) -> None:
        reserved = self.under_way.get(agent_id)
        if not reserved:
            return
        reserved.pop()
        changed = self._condition()
        async with changed:
            changed.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    def _expected(self, agent_id: str, request: Request) -> Reserved:
        reply = self.largest_reply or FIRST_REPLY_TOKENS
        usage = Usage(estimate_message_tokens(request.messages), reply, estimated=True)
        price = self.prices.get(agent_id)
        cost = price(usage) if price is not None and self.gate.caps.cost_usd is not None else None
        return Reserved(usage.tokens, cost or 0.0)

    def _reserved(self) -> list[Reserved]:
        return [reserved for per_agent in self.under_way.values() for reserved in per_agent]

    def _fits(self, expected: Reserved) -> bool:
        """Whether the budget left covers the calls under way and ``expected``."""
        spent = self.gate.spent().values()
        reserved = [*self._reserved(), expected]
        caps = self.gate.caps
        if caps.tokens is not None:
            tokens = sum(usage.tokens for usage in spent) + sum(item.tokens for item in reserved)
            if tokens > caps.tokens:
                return False
        if caps.cost_usd is not None:
            cost = sum(usage.cost_usd or 0.0 for usage in spent) + sum(item.cost_usd for item in reserved)
            if cost > caps.cost_usd:
                return False
        return True

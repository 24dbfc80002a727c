"""The run's spending caps (``orchestrator.max_cost_usd``, ``max_total_tokens``, ``--max-cost``).

They are checked before each step (each backend call of an agent) against what the run has spent so far:
the ledger's sums of the ``AgentUsage`` events, the same events the run log keeps and ``logs show``, the
report and the session record add up. Once a cap is spent no new step starts: a call under way finishes,
the attempt ends with the best answer so far, and that answer is final as it is (no presentation, no
post-evaluation). The gate knows no feature: it sees only what every call spent.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen_cli.agent.data import StepRefused
from massgen_cli.events import AgentUsage, Notice, RunEvent, Usage

if TYPE_CHECKING:
    from massgen_cli.config.orchestrator import OrchestratorConfig


@dataclass(frozen=True)
class SpendingCaps:
    """What the run (one massgen process: a question, or every turn of a session) may spend in all:
    ``cost_usd`` in US dollars, ``tokens`` in input and output tokens (None: no cap). Checked before each
    step against the figures the run log keeps (see ``SpendingGate``)."""

    cost_usd: float | None = None
    tokens: int | None = None

    def __bool__(self) -> bool:
        return self.cost_usd is not None or self.tokens is not None

    @classmethod
    def of(cls, settings: OrchestratorConfig) -> SpendingCaps:
        """The caps the config sets: ``max_cost_usd`` (``--max-cost`` sets it too), ``max_total_tokens``."""
        return cls(settings.max_cost_usd, settings.max_total_tokens)


Spent = Callable[[], Mapping[str, Usage]]
"""Each agent's usage in the run so far."""
Settle = Callable[[], Awaitable[None]]
"""Waits until every call that ended has been priced (see ``Agent.settled``)."""


class SpendingCapReached(StepRefused):
    """A step may not start: the run has spent a cap (the message says which, and how much)."""


def dollars(amount: float) -> str:
    """``$0.50``, ``$1.25``; four places when cents do not say it (``$0.0031``)."""
    return f"${amount:.2f}" if round(amount, 2) == amount else f"${amount:.4f}"


async def _nothing_to_settle() -> None:
    """No call is priced late where nothing is watched."""


def _nothing_spent() -> Mapping[str, Usage]:
    return {}


def _ignore(event: RunEvent) -> None:
    """Where the gate of an attempt nobody watches speaks."""


class SpendingGate:
    """The caps of ``caps`` against what ``spent`` says the run spent; what it has to say (the cap
    reached, an agent whose calls have no known price) goes to ``emit`` once."""

    def __init__(
        self,
        caps: SpendingCaps | None = None,
        spent: Spent = _nothing_spent,
        settle: Settle = _nothing_to_settle,
        emit: Callable[[RunEvent], None] = _ignore,
        above: Callable[[], str] | None = None,
    ):
        """``above``: why the run this one is nested in may start no step (its caps are spent), or ""."""
        self.caps = caps or SpendingCaps()
        self.spent = spent
        self.settle = settle
        self.emit = emit
        self.above = above
        self.said: set[str] = set()
        self.shared: SharedSpending | None = None
        self.run_key = 0

    def share(self, shared: SharedSpending, run_key: int) -> None:
        """Count what the other runs sharing ``shared`` spend beside what ``spent`` says (a batch's
        questions under one cap); ``run_key`` is this run's key there."""
        self.shared, self.run_key = shared, run_key

    @property
    def bounded(self) -> bool:
        """Whether anything caps this run: its own caps, or those of the run it is nested in."""
        return bool(self.caps) or self.above is not None

    def reached(self) -> str:
        """Why no new step may start (a cap is spent, here or in the run this one is nested in), or ""
        while steps may start."""
        if not self.bounded:
            return ""
        spent = self._counted()
        reason = self._tokens_spent(spent) or self._cost_spent(spent) or self._above_spent()
        if reason:
            self._say_once("reached", Notice("warning", f"{reason}: no new step starts"))
        return reason

    async def reason(self) -> str:
        """``reached``, once the calls that ended are priced."""
        if not self.bounded:
            return ""
        await self.settle()
        return self.reached()

    async def check(self) -> None:
        """Before a step: a ``SpendingCapReached`` when a cap is spent."""
        reason = await self.reason()
        if reason:
            raise SpendingCapReached(reason)

    def _counted(self) -> Mapping[str, Usage]:
        """What the caps count: the run's own spending and, when it shares its budget, the others' as one
        more entry."""
        spent = self.spent()
        others = self.shared.others(self.run_key) if self.shared is not None else Usage(0, 0)
        return {**spent, OTHER_RUNS: others} if others.tokens or others.cost_usd else spent

    def _above_spent(self) -> str:
        above = self.above() if self.above is not None else ""
        return f"{above} in the run that started this team" if above else ""

    def _tokens_spent(self, spent: Mapping[str, Usage]) -> str:
        cap = self.caps.tokens
        tokens = sum(usage.tokens for usage in spent.values())
        if cap is None or tokens < cap:
            return ""
        return f"token budget reached: {tokens:,} of {cap:,} tokens"

    def _cost_spent(self, spent: Mapping[str, Usage]) -> str:
        cap = self.caps.cost_usd
        if cap is None:
            return ""
        for agent_id in sorted(agent for agent, usage in spent.items() if usage.cost_usd is None):
            why = "no price is known for its model; set its backend.pricing"
            self._say_once(
                agent_id, Notice("warning", f"the spending cap counts nothing for {agent_id}: {why}")
            )
        cost = sum(usage.cost_usd or 0.0 for usage in spent.values())
        return f"spending cap reached: {dollars(cost)} of {dollars(cap)}" if cost >= cap else ""

    def _say_once(self, key: str, notice: Notice) -> None:
        if key not in self.said:
            self.said.add(key)
            self.emit(notice)


OTHER_RUNS = "(the batch's other questions)"
"""The name under which a run's gate counts what the runs it shares a budget with spent."""


class SharedSpending:
    """What several runs of one process spend together under one budget (``massgen batch --max-cost``:
    every question's run, each in its own thread): each run's events add its calls' usage here
    (``counting``), and each run's gate counts what the others spent beside its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_run: dict[int, Usage] = {}
        self._keys = itertools.count(1)

    def join(self) -> int:
        """A key of its own for a run that joins the budget (never one an earlier run had, as the id of
        a run's object may be once that run is gone)."""
        with self._lock:
            return next(self._keys)

    def add(self, run: int, usage: Usage) -> None:
        """``usage`` spent by the run ``run`` (its key from ``join``)."""
        known = Usage(usage.input_tokens, usage.output_tokens, cost_usd=usage.cost_usd or 0.0)
        with self._lock:
            self._by_run[run] = self._by_run.get(run, Usage(0, 0)) + known

    def counting(self, run: int) -> Callable[[RunEvent], None]:
        """A listener of the run ``run``'s events that adds what its calls spend here."""

        def heard(event: RunEvent) -> None:
            if isinstance(event, AgentUsage):
                self.add(run, event.usage)

        return heard

    def total(self) -> Usage:
        """What every run spent (the calls with no known price counted as free)."""
        with self._lock:
            spent = list(self._by_run.values())
        return Usage.total(spent)

    def others(self, run: int) -> Usage:
        """What every run but ``run`` spent."""
        with self._lock:
            spent = [usage for key, usage in self._by_run.items() if key != run]
        return Usage.total(spent)

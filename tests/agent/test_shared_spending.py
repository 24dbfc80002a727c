"""A budget shared by several runs (``batch --max-cost``): each run's ledger adds what its calls spent,
and each run's spending gate counts the others' spending beside its own."""

from __future__ import annotations

import threading

from massgen_cli.agent.spending import OTHER_RUNS, SharedSpending, SpendingCaps, SpendingGate
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.events import AgentUsage, Usage


def test_a_run_s_gate_counts_what_the_other_runs_spent():
    shared = SharedSpending()
    first, second = Ledger(["a"], shared), Ledger(["b"], shared)
    gate = SpendingGate(SpendingCaps(cost_usd=1.0), second.usage_of_budget)
    first(AgentUsage("a", Usage(100, 10, cost_usd=0.6)))
    assert gate.reached() == ""
    second(AgentUsage("b", Usage(100, 10, cost_usd=0.5)))
    assert gate.reached() == "spending cap reached: $1.10 of $1.00"
    assert second.usage_of_budget()[OTHER_RUNS].cost_usd == 0.6
    assert second.usage_of_run() == {"b": Usage(100, 10, cost_usd=0.5)}, "the run's own figures unchanged"


def test_a_call_with_no_known_price_counts_its_tokens_and_no_dollars():
    shared = SharedSpending()
    ledger = Ledger(["a"], shared)
    ledger(AgentUsage("a", Usage(100, 10, cost_usd=None)))
    assert shared.total() == Usage(100, 10, cost_usd=0.0)


def test_runs_in_threads_add_up_exactly():
    shared = SharedSpending()
    ledgers = [Ledger([f"agent{n}"], shared) for n in range(8)]

    def spend(ledger: Ledger) -> None:
        for _ in range(500):
            ledger(AgentUsage(ledger.agent_ids[0], Usage(1, 1, cost_usd=0.25)))

    threads = [threading.Thread(target=spend, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shared.total() == Usage(4000, 4000, cost_usd=1000.0)
    assert shared.others(id(ledgers[0])) == Usage(3500, 3500, cost_usd=875.0)

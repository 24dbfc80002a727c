"""A budget shared by several runs (``batch --max-cost``): each run's events add what its calls spent,
and each run's spending gate counts the others' spending beside its own."""

from __future__ import annotations

import threading

from massgen_cli.agent.spending import OTHER_RUNS, SharedSpending, SpendingCaps, SpendingGate
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.events import AgentUsage, EventSink, Usage


def sharing_run(shared: SharedSpending, agent_id: str) -> tuple[EventSink, Ledger, SpendingGate]:
    """A run's event sink, its ledger and its gate, as an app that shares ``shared`` has them."""
    ledger, key = Ledger([agent_id]), shared.join()
    sink = EventSink(ledger, shared.counting(key))
    gate = SpendingGate(SpendingCaps(cost_usd=1.0), ledger.usage_of_run)
    gate.share(shared, key)
    return sink, ledger, gate


def test_a_run_s_gate_counts_what_the_other_runs_spent():
    shared = SharedSpending()
    (first, _, _), (second, ledger, gate) = sharing_run(shared, "a"), sharing_run(shared, "b")
    first(AgentUsage("a", Usage(100, 10, cost_usd=0.6)))
    assert gate.reached() == ""
    second(AgentUsage("b", Usage(100, 10, cost_usd=0.5)))
    assert gate.reached() == "spending cap reached: $1.10 of $1.00"
    assert shared.others(gate.run_key).cost_usd == 0.6
    assert ledger.usage_of_run() == {"b": Usage(100, 10, cost_usd=0.5)}, "the run's own figures unchanged"


def test_a_run_that_joins_after_others_ended_counts_what_they_spent():
    """Each run joins with a key of its own: a run's object id may be one an ended run had."""
    shared = SharedSpending()
    for n in range(20):
        sink, _, _ = sharing_run(shared, f"q{n}")
        sink(AgentUsage(f"q{n}", Usage(10, 0, cost_usd=0.25)))
        del sink
    _, _, gate = sharing_run(shared, "last")
    assert shared.others(gate.run_key) == Usage(200, 0, cost_usd=5.0)


def test_a_gate_that_shares_nothing_counts_its_run_alone():
    ledger = Ledger(["a"])
    gate = SpendingGate(SpendingCaps(cost_usd=1.0), ledger.usage_of_run)
    ledger(AgentUsage("a", Usage(100, 10, cost_usd=0.9)))
    assert gate.reached() == ""
    assert OTHER_RUNS not in gate._counted()


def test_a_call_with_no_known_price_counts_its_tokens_and_no_dollars():
    shared = SharedSpending()
    sink, _, _ = sharing_run(shared, "a")
    sink(AgentUsage("a", Usage(100, 10, cost_usd=None)))
    assert shared.total() == Usage(100, 10, cost_usd=0.0)


def test_runs_in_threads_add_up_exactly():
    shared = SharedSpending()
    runs = [sharing_run(shared, f"agent{n}") for n in range(8)]

    def spend(sink: EventSink, ledger: Ledger) -> None:
        for _ in range(500):
            sink(AgentUsage(ledger.agent_ids[0], Usage(1, 1, cost_usd=0.25)))

    threads = [threading.Thread(target=spend, args=(sink, ledger)) for sink, ledger, _ in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shared.total() == Usage(4000, 4000, cost_usd=1000.0)
    assert shared.others(runs[0][2].run_key) == Usage(3500, 3500, cost_usd=875.0)

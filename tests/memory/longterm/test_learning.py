"""Learned values in the store: a ranking reordered by them, and updates that move them."""

from __future__ import annotations

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.values import DEFAULT_VALUE, ValueUpdate, blend, td_update
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients


def test_ranking_follows_values_when_similarities_tie(tmp_path):
    store = PersistentMemory(PersistentMemoryConfig(enabled=True), tmp_path, domain="g", task_type="g")
    try:
        first = store.record([{"role": "user", "content": "alpha note"}], RecordContext("a", "s", 1)).added[0]
        second = store.record([{"role": "user", "content": "beta note"}], RecordContext("a", "s", 1)).added[0]
        store.index.set_value(first, "g", 0.1)
        store.index.set_value(second, "g", 0.9)
        tied = [(first, 0.5), (second, 0.5)]
        assert [i for i, _ in store.values.rank(tied, "g", 0.3)] == [second, first]
        assert [i for i, _ in store.values.rank([(first, 0.6), (second, 0.5)], "g", 0.0)] == [first, second]
        assert blend(1.0, 0.0, 0.3) == pytest.approx(0.7)
    finally:
        store.close()
        close_clients()


def test_an_update_moves_each_value_toward_its_reward_under_its_goal(store):
    context = RecordContext("a", "s", 1)
    [won] = store.record([{"role": "user", "content": "The bridge code is 1234."}], context).added
    [lost] = store.record([{"role": "user", "content": "The bridge code is 9999."}], context).added
    assert store.index.values([won, lost], "bridge_code") == {}, "no value learned yet"
    updates = [ValueUpdate(won, 1.0, 1.0), ValueUpdate(lost, 0.0, 2.0)]
    learned = store.values.update(updates, "Bridge Code", 0.1)
    assert learned == {
        won: pytest.approx(td_update(DEFAULT_VALUE, 1.0, 1.0, 0.1)),
        lost: pytest.approx(td_update(DEFAULT_VALUE, 0.0, 2.0, 0.1)),
    }
    assert learned[lost] < DEFAULT_VALUE < learned[won]
    assert store.index.values([won, lost], "bridge_code") == learned, "kept under the goal's key segment"
    again = store.values.update([ValueUpdate(won, 1.0, 1.0)], "bridge code", 0.1)
    assert again[won] == pytest.approx(td_update(learned[won], 1.0, 1.0, 0.1)), (
        "it starts from the last value"
    )

"""Housekeeping: listing what the store holds, and taking memories out of the index and the vector
store alike, even when the vector store's half is already gone."""

from __future__ import annotations

from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.journal import NAMESPACE


def _user(text: str) -> list:  # type: ignore[type-arg]
    return [{"role": "user", "content": text}]


def test_a_listing_is_one_agents_or_one_sessions_when_asked(store):
    store.record(_user("The bridge opens at nine."), RecordContext("a", "s", 1))
    store.record(_user("The pier is number 3."), RecordContext("b", "t", 1))
    assert len(store.housekeeping.memories()) == 2
    assert [m.text for m in store.housekeeping.memories(agent_id="a")] == ["The bridge opens at nine."]
    assert [m.text for m in store.housekeeping.memories(session_id="t")] == ["The pier is number 3."]
    assert store.housekeeping.memories(session_id="t", agent_id="a") == []


def test_clear_removes_both_stores(store):
    store.record([{"role": "user", "content": "to be cleared"}], RecordContext("a", "s", 1))
    assert len(store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=10)["results"]) == 1
    assert store.clear() == 1
    assert store.list_memories() == [] and store.index.pending() == []
    assert store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=10)["results"] == []


def test_forgetting_a_memory_whose_vector_is_already_gone_still_takes_it_from_the_index(store):
    [memory_id] = store.record(_user("The ferry leaves at 06:40."), RecordContext("a", "s", 1)).added
    store.mem0.delete(memory_id)  # as a delete cut short after the vector store's half
    assert store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=10)["results"] == []
    assert [m.id for m in store.list_memories()] == [memory_id], "the index still has it"
    store.housekeeping.forget([memory_id])
    assert store.list_memories() == [] and store.index.pending() == []

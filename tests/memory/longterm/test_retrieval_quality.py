"""Hybrid ranking beats dense-only on the synthetic long-conversation set (a quality check, not a timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients

_SPEC = importlib.util.spec_from_file_location(
    "synthetic_conversations",
    Path(__file__).resolve().parents[3] / "benchmarks" / "synthetic_conversations.py",
)
assert _SPEC is not None and _SPEC.loader is not None
synthetic = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = synthetic  # dataclasses look their module up by name
_SPEC.loader.exec_module(synthetic)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):  # type: ignore[no-untyped-def]
    conversation = synthetic.build_conversation(people=20, chatter_per_fact=4, seed=11)
    store = PersistentMemory(
        PersistentMemoryConfig(enabled=True),
        tmp_path_factory.mktemp("quality"),
        domain="qa",
        task_type="recall",
    )
    synthetic.load_into(store, conversation)
    yield store, conversation
    store.close()
    close_clients()


def test_hybrid_beats_dense_and_matches_lexical(loaded):
    store, conversation = loaded
    recall = {
        method: synthetic.recall_at(store, conversation, 5, method)
        for method in ("dense", "lexical", "hybrid")
    }
    assert recall["hybrid"] > recall["dense"], recall
    assert recall["hybrid"] >= recall["lexical"], recall


def test_lexical_index_follows_deletes(loaded):
    store, conversation = loaded
    probe = conversation.probes[0]
    [hit] = store.search(probe.question, limit=1, method="lexical")
    assert [i for i, _ in store.index.lexical(probe.question, 50)].count(hit.id) == 1
    store.forget([hit.id])
    assert store.index.pending() == []
    assert hit.id not in dict(store.index.lexical(probe.question, 50))
    assert hit.id not in {h.id for h in store.search(probe.question, limit=10, method="hybrid")}


def test_recall_is_the_same_alone_and_crowded(tmp_path):
    conversation = synthetic.build_conversation(people=12, chatter_per_fact=4, seed=5)
    store = PersistentMemory(PersistentMemoryConfig(enabled=True), tmp_path, domain="qa", task_type="recall")
    try:
        synthetic.load_into(store, conversation, "asked")
        alone = synthetic.recall_at(store, conversation, 5, "hybrid", "asked")
        for seed in (21, 22):  # the same people and topics, other facts, other sessions
            synthetic.load_into(store, synthetic.build_conversation(12, 4, seed=seed), f"other_{seed}")
        crowded = synthetic.recall_at(store, conversation, 5, "hybrid", "asked")
        unscoped = synthetic.recall_at(store, conversation, 5, "hybrid")
    finally:
        store.close()
        close_clients()
    assert alone > 0.5, alone
    assert abs(crowded - alone) <= 0.05, (alone, crowded)
    assert unscoped < crowded, "the crowd was there to be filtered out"

"""The Qdrant index against the local one, on the same memories: what can be equal is equal (which
memories a scope admits, listing, attribution, the memories around each one, values, stale marks,
clearing), and the ranking, which Qdrant computes its own way (IDF over the whole collection; the same
reciprocal rank fusion), agrees as far as was measured
(``benchmarks/qdrant_agreement.py``; its figures for this set are in the README).

Qdrant is qdrant-client's in-process engine (local mode): the same Query API as a server, sparse
vectors with the IDF modifier, and the three rankings asked in one batch request."""

from __future__ import annotations

import pytest
from qdrant_client import QdrantClient

from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.script_module import load_script

pytestmark = pytest.mark.slow

agreement_bench = load_script("benchmarks/qdrant_agreement.py")
synthetic = agreement_bench.synthetic

HYBRID_OVERLAP = 0.99
"""Least mean overlap of the two hybrid top 10s in any scope (measured: 1.000 in every scope of this set
since both fuse with the same function; 0.992 to 1.000 when Qdrant's server fused)."""
ONE_RANKING_OVERLAP = 0.99
"""Least mean overlap of the lexical or the dense top 10s alone (measured: 1.000 in every scope)."""
ONE_RANKING_SAME = 0.9
"""Least share of identical lexical or dense top 10s (measured: 0.917 to 1.000)."""


@pytest.fixture(scope="module")
def stores(tmp_path_factory):  # type: ignore[no-untyped-def]
    conversation = synthetic.build_conversation(people=12, chatter_per_fact=3, seed=5)
    local = PersistentMemory(
        agreement_bench.local_settings(), tmp_path_factory.mktemp("local"), domain="qa", task_type="recall"
    )
    server = QdrantClient(location=":memory:")
    qdrant = agreement_bench.open_qdrant_store(tmp_path_factory.mktemp("qdrant"), server)
    for store in (local, qdrant):
        agreement_bench.load(store, conversation)
    yield local, qdrant, conversation
    local.close()
    qdrant.close()
    close_clients()
    server.close()


def scopes(conversation) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return agreement_bench.scopes(len(conversation.messages))


def keys(memories) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(memory.key for memory in memories)


def test_both_indexes_hold_and_list_the_same_memories(stores):
    local, qdrant, _ = stores
    assert local.index.count() == qdrant.index.count() > 100
    assert keys(local.list_memories()) == keys(qdrant.list_memories())
    assert keys(local.list_memories(include_stale=True)) == keys(qdrant.list_memories(include_stale=True))
    for session_id, agent_id in (("first", None), ("second", None), (None, "agent_b"), ("first", "agent_c")):
        expected = local.list_memories(session_id=session_id, agent_id=agent_id)
        assert keys(expected) == keys(qdrant.list_memories(session_id=session_id, agent_id=agent_id))
    marked = {local.index.get([m])[m].key for m in local.index.stale_marks()}
    assert marked and marked == {qdrant.index.get([m])[m].key for m in qdrant.index.stale_marks()}


def test_every_scope_admits_the_same_memories(stores):
    local, qdrant, conversation = stores
    for name, scope in scopes(conversation).items():
        admitted = [
            {h.memory.key for h in store.search("anything", limit=1000, scope=scope, method="dense")}
            for store in (local, qdrant)
        ]
        assert admitted[0] == admitted[1] and admitted[0], name


@pytest.mark.parametrize("method", ["lexical", "dense"])
def test_one_ranking_alone_agrees_as_measured(stores, method):
    local, qdrant, conversation = stores
    for name, scope in scopes(conversation).items():
        found = agreement_bench.agreement(local, qdrant, conversation, scope, method)
        assert found.overlap >= ONE_RANKING_OVERLAP, (name, found)
        assert found.identical >= ONE_RANKING_SAME, (name, found)
        assert found.qdrant_recall == found.local_recall, (name, found)


def test_fused_ranking_agrees_as_measured_and_finds_what_the_local_index_finds(stores):
    local, qdrant, conversation = stores
    for name, scope in scopes(conversation).items():
        found = agreement_bench.agreement(local, qdrant, conversation, scope, "hybrid")
        assert found.overlap >= HYBRID_OVERLAP, (name, found)
        assert found.qdrant_recall >= found.local_recall, (name, found)


def test_hits_are_attributed_to_the_same_source(stores):
    local, qdrant, conversation = stores
    for name in ("viewer", "viewer, every session", "agent", "session"):
        scope = scopes(conversation)[name]
        for probe in conversation.probes:
            expected = {h.memory.key: h.source for h in local.search(probe.question, limit=10, scope=scope)}
            found = {h.memory.key: h.source for h in qdrant.search(probe.question, limit=10, scope=scope)}
            shared = expected.keys() & found.keys()
            assert shared and {k: expected[k] for k in shared} == {k: found[k] for k in shared}, name


def test_values_are_the_same(stores):
    local, qdrant, _ = stores
    by_key = {store: {m.key: m.id for m in store.list_memories()} for store in (local, qdrant)}
    for rank, key in enumerate(sorted(by_key[local])[:5]):
        for store in (local, qdrant):
            store.index.set_value(by_key[store][key], "recall", 0.5 + rank / 10)
    ranked = [
        [
            (store.index.get([i])[i].key, value, updates)
            for i, value, updates in store.index.ranked_values("recall", 3)
        ]
        for store in (local, qdrant)
    ]
    assert ranked[0] == ranked[1] and len(ranked[0]) == 3


def test_the_memories_around_each_memory_are_the_same(stores):
    local, qdrant, conversation = stores
    qdrant_ids = {m.key: m.id for m in qdrant.list_memories(include_stale=True)}
    compared = 0
    for name, scope in scopes(conversation).items():
        for probe in conversation.probes[:4]:
            for hit in local.search(probe.question, limit=5, scope=scope):
                expected = around(local, hit.id, hit.source, scope)
                assert around(qdrant, qdrant_ids[hit.memory.key], hit.source, scope) == expected, name
                compared += bool(expected)
    assert compared > 40


def around(store, memory_id: str, source, scope) -> list:  # type: ignore[no-untyped-def,type-arg]
    """What ``store`` records around ``source`` of a memory, by key: ``(offset, key, source)``."""
    found = store.index.neighbours(memory_id, source, 2, scope)
    keys = {i: m.key for i, m in store.index.get(i for _, i, _ in found).items()}
    return [(offset, keys[i], near) for offset, i, near in found]


def test_clearing_a_session_clears_the_same_memories(stores):
    local, qdrant, _ = stores
    assert local.clear(session_id="second") == qdrant.clear(session_id="second") > 0
    assert keys(local.list_memories(include_stale=True)) == keys(qdrant.list_memories(include_stale=True))
    assert local.index.count() == qdrant.index.count()

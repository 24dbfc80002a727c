"""One ranking on every index: the same memories in the local index (SQLite in the state folder) and in
a server's (PostgreSQL, ranked in SQL) give the same top 10 for the same queries, whatever the scope,
the viewer or the method, and the same memories around each hit."""

from __future__ import annotations

import uuid

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.script_module import load_script

pytestmark = pytest.mark.slow

conformance_set = load_script("benchmarks/qdrant_agreement.py")  # the set and scopes every index is held to
synthetic = conformance_set.synthetic
load, scopes, METHODS = conformance_set.load, conformance_set.scopes, conformance_set.METHODS


@pytest.fixture(scope="module")
def stores(tmp_path_factory, pgvector_url):  # type: ignore[no-untyped-def]
    conversation = synthetic.build_conversation(people=12, chatter_per_fact=3, seed=5)
    local = PersistentMemory(
        PersistentMemoryConfig(enabled=True),
        tmp_path_factory.mktemp("local"),
        domain="qa",
        task_type="recall",
    )
    server_settings = PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "pgvector",
            "pgvector": {"connection_string": pgvector_url, "collection_name": f"c_{uuid.uuid4().hex[:10]}"},
        }
    )
    server = PersistentMemory(
        server_settings, tmp_path_factory.mktemp("server"), domain="qa", task_type="recall"
    )
    for store in (local, server):
        load(store, conversation)
    yield local, server, conversation
    local.close()
    server.close()
    close_clients()


def top_keys(store: PersistentMemory, query: str, scope: SearchFilter, method: str) -> list[str]:
    return [hit.memory.key for hit in store.search(query, limit=10, scope=scope, method=method)]


def test_both_indexes_hold_the_same_memories(stores):
    local, server, _ = stores
    assert local.index.count() == server.index.count() > 100
    assert {m.key for m in local.list_memories()} == {m.key for m in server.list_memories()}
    assert len(local.index.stale_marks()) == len(server.index.stale_marks()) > 0


@pytest.mark.parametrize("method", METHODS)
def test_every_scope_ranks_the_same_top_ten(stores, method):
    local, server, conversation = stores
    turns = len(conversation.messages)
    differing = []
    compared = 0
    for name, scope in scopes(turns).items():
        for probe in conversation.probes:
            expected = top_keys(local, probe.question, scope, method)
            found = top_keys(server, probe.question, scope, method)
            compared += 1
            if found != expected:
                differing.append((name, probe.question, expected, found))
    assert compared == len(conversation.probes) * len(scopes(turns))
    assert not differing, differing[:3]


def test_hits_are_attributed_to_the_same_source(stores):
    local, server, conversation = stores
    viewer = scopes(len(conversation.messages))["viewer"]
    for probe in conversation.probes:
        expected = [(h.memory.key, h.source) for h in local.search(probe.question, limit=10, scope=viewer)]
        found = [(h.memory.key, h.source) for h in server.search(probe.question, limit=10, scope=viewer)]
        assert found == expected


def with_context(store: PersistentMemory, query: str, scope: SearchFilter) -> list:  # type: ignore[type-arg]
    """Each hit's key with the memories around it: ``(offset, text, source)``."""
    hits = store.search(query, limit=5, scope=scope, context=2)
    return [(hit.memory.key, [(t.offset, t.text, t.source) for t in hit.context]) for hit in hits]


def test_the_memories_around_each_hit_are_the_same(stores):
    local, server, conversation = stores
    compared = 0
    for name, scope in scopes(len(conversation.messages)).items():
        for probe in conversation.probes[:4]:
            expected = with_context(local, probe.question, scope)
            assert with_context(server, probe.question, scope) == expected, (name, probe.question)
            compared += sum(bool(around) for _, around in expected)
    assert compared > 40

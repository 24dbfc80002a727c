"""One ranking on every index: the same memories in the local index (SQLite in the state folder) and in
a server's (PostgreSQL, ranked in SQL) give the same top 10 for the same queries, whatever the scope,
the viewer or the method."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients

pytestmark = pytest.mark.slow

_SPEC = importlib.util.spec_from_file_location(
    "synthetic_conversations",
    Path(__file__).resolve().parents[3] / "benchmarks" / "synthetic_conversations.py",
)
assert _SPEC is not None and _SPEC.loader is not None
synthetic = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = synthetic
_SPEC.loader.exec_module(synthetic)

AGENTS = ("agent_a", "agent_b", "agent_c")
METHODS = ("hybrid", "lexical", "dense")


def load(store: PersistentMemory, conversation: object) -> None:
    """Two sessions: the conversation's messages by three agents taking turns (each turn won by one of
    them), and the same conversation's probes' facts again in a second session, by one agent."""
    messages = synthetic.records(conversation)
    contexts = [RecordContext(AGENTS[turn % 3], "first", turn) for turn in range(1, len(messages) + 1)]
    store.prepare_embeddings(list(zip(messages, contexts, strict=True)))
    for message, context in zip(messages, contexts, strict=True):
        store.record([message], context)
        store.record_winner("first", context.turn, AGENTS[context.turn % 2])
    for turn, probe in enumerate(conversation.probes[::2], start=1):  # type: ignore[attr-defined]
        store.record([{"role": "assistant", "content": probe.fact}], RecordContext("agent_a", "second", turn))
    for memory in store.list_memories()[::17]:
        store.index.mark_stale(memory.id, "outdated", "agent_b", session_id="first", turn=3)


def scopes(turns: int) -> dict[str, SearchFilter]:
    return {
        "store": SearchFilter(),
        "session": SearchFilter(session_id="first"),
        "agent": SearchFilter(agent_id="agent_b"),
        "viewer": SearchFilter(viewer=Viewer("agent_c", "first", turns // 2)),
        "viewer, every session": SearchFilter(viewer=Viewer("agent_a", "second", 3, all_sessions=True)),
        "stale too": SearchFilter(session_id="first", include_stale=True),
    }


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
    assert compared == len(conversation.probes) * 6
    assert not differing, differing[:3]


def test_hits_are_attributed_to_the_same_source(stores):
    local, server, conversation = stores
    viewer = scopes(len(conversation.messages))["viewer"]
    for probe in conversation.probes:
        expected = [(h.memory.key, h.source) for h in local.search(probe.question, limit=10, scope=viewer)]
        found = [(h.memory.key, h.source) for h in server.search(probe.question, limit=10, scope=viewer)]
        assert found == expected

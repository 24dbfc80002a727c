"""Long-term memory for real: mem0 over local Qdrant with the offline embedder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import _open_local, close_clients
from tests.servers.fake_providers import FakeProviderServer, Reply


def test_same_content_twice_is_one_memory_with_two_sources(store):
    first = store.record(
        [{"role": "user", "content": "The  secret code is 7781."}], RecordContext("a", "s", 1)
    )
    second = store.record(
        [{"role": "user", "content": "the secret code is 7781."}], RecordContext("b", "s", 2)
    )
    assert len(first.added) == 1 and second.added == [] and second.existing == first.added
    [memory] = store.list_memories()
    assert memory.key.startswith("general:general:") and len(memory.key.split(":")[2]) == 16
    assert [(s.agent_id, s.turn) for s in memory.sources] == [("a", 1), ("b", 2)]


def test_turn_aware_visibility(store):
    store.record(
        [{"role": "assistant", "content": "Winner fact: the bridge opens at noon."}],
        RecordContext("a", "s", 1),
    )
    store.record(
        [{"role": "assistant", "content": "Loser fact: the bridge is closed forever."}],
        RecordContext("b", "s", 1),
    )
    store.record(
        [{"role": "assistant", "content": "Current fact: the bridge opens at dawn."}],
        RecordContext("a", "s", 2),
    )
    store.record_winner("s", 1, "a")
    seen = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("c", "s", 2))
        )
    }
    assert seen == {"Winner fact: the bridge opens at noon."}
    own = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("b", "s", 2))
        )
    }
    assert "Loser fact: the bridge is closed forever." in own
    other_session = store.search("bridge", limit=10, scope=SearchFilter(viewer=Viewer("c", "t", 5)))
    assert other_session == []
    everywhere = store.search(
        "bridge", limit=10, scope=SearchFilter(viewer=Viewer("c", "t", 5, all_sessions=True))
    )
    assert {hit.text for hit in everywhere} == {"Winner fact: the bridge opens at noon."}


def test_a_later_source_never_makes_a_current_turn_record_visible(store):
    store.record_winner("s", 1, "a")
    store.record([{"role": "user", "content": "shared words"}], RecordContext("b", "s", 2))
    store.record([{"role": "user", "content": "shared words"}], RecordContext("a", "s", 2))
    assert store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 2))) == []
    assert store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 3))) == [], (
        "turn 2 has no winner yet"
    )
    store.record_winner("s", 2, "a")
    [hit] = store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 3)))
    assert (hit.source.agent_id, hit.source.turn) == ("a", 2)


def test_long_text_is_chunked(store):
    text = " ".join(f"word{i}" for i in range(450))
    outcome = store.record([{"role": "assistant", "content": text}], RecordContext("a", "s", 1))
    assert len(outcome.added) == 3


def test_embedder_mismatch_is_a_clear_error(store):
    store.record([{"role": "user", "content": "x"}], RecordContext("a", "s", 1))
    other = PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "embedding": {"provider": "openai", "model": "text-embedding-3-small", "api_key": "k"},
        }
    )
    with pytest.raises(MemoryStoreError, match="built with embedder local:all-MiniLM-L6-v2-int8/384"):
        PersistentMemory(other, store.state_dir, domain="general", task_type="general")


def test_memory_llm_is_the_yaml_model(tmp_path):
    server = FakeProviderServer().start()
    facts = {"memory": [{"id": "0", "text": "User's favourite colour is teal", "attributed_to": "user"}]}
    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "mem-model-x",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": json.dumps(facts)},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    server.script(*(Reply(body=completion) for _ in range(3)))
    settings = PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "llm": {
                "provider": "openai",
                "model": "mem-model-x",
                "api_key": "sk-test",
                "base_url": f"{server.root_url}/v1",
            },
        }
    )
    store = PersistentMemory(settings, tmp_path, domain="general", task_type="general")
    try:
        outcome = store.record(
            [{"role": "user", "content": "I love teal more than any colour."}], RecordContext("a", "s", 1)
        )
        assert outcome.facts == 1 and not outcome.verbatim
        chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
        assert chat and chat[0].body["model"] == "mem-model-x"
        [hit] = store.search("favourite colour", limit=3)
        assert hit.text == "User's favourite colour is teal"
        store.record([{"role": "user", "content": "Teal, really."}], RecordContext("b", "s", 1))
        assert len(store.list_memories()) == 1, "the same fact again is a new source, not a new memory"
    finally:
        store.close()
        close_clients()
        server.stop()


def test_local_lock_held_by_another_process_names_the_remedy(tmp_path):
    path = tmp_path / "qdrant"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from qdrant_client import QdrantClient; c = QdrantClient(path={str(path)!r}); "
            "print('ready', flush=True); import signal; signal.pause()",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(
            MemoryStoreError, match="another massgen process is using this local memory store"
        ):
            _open_local(path)
    finally:
        holder.terminate()
        holder.wait(10)
    client = _open_local(path)  # released once the holder is gone
    try:
        assert client.get_collections().collections == [], "the store opens and answers"
    finally:
        client.close()

"""The store's vectors: the embedder that built a store is the one it opens with, and what is stored is
embedded once, for the index and for mem0 alike."""

from __future__ import annotations

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.persistent import PersistentMemory


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


def test_the_vector_of_what_is_stored_waits_for_mem0s_own_embed(store):
    text = "The harbour master keeps the tide tables."
    adapter = store.mem0.embedding_model
    assert text not in adapter.cache
    [asked] = store.embedding.embed([text])
    kept = store.embedding.stored_vector(text)
    assert kept == pytest.approx(asked), "one embedder, one vector for the same text"
    assert adapter.embed(text) is kept, "mem0's add takes the kept vector instead of embedding again"
    assert text not in adapter.cache, "and takes it only once"


def test_an_import_is_embedded_in_one_batch_ahead_of_its_adds(store):
    lines = [f"Line {n} of the harbour log." for n in range(3)]
    adapter = store.mem0.embedding_model
    assert not set(lines) & set(adapter.cache)
    store.embedding.prepare(line for line in lines)
    assert set(lines) <= set(adapter.cache)
    outcome = store.record([{"role": "user", "content": lines[0]}], RecordContext("a", "s", 1))
    assert len(outcome.added) == 1 and lines[0] not in adapter.cache, "the add used the prepared vector"

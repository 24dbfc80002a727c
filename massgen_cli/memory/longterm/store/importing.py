"""Importing many records at the embedder's pace: each batch is written (``PersistentMemory.record_many``)
while the next batch's new texts are embedded in a worker thread (the embedder leaves the interpreter
free while it works), and the vector store is opened in another while the first batch is embedded
(mem0 itself, whose import takes seconds and about 95 MB, only where the store needs it: not for the
local folder)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any

from massgen_cli.memory.longterm.record.memories import RecordOutcome
from massgen_cli.memory.longterm.store.bulk_writing import Items, Vectors

if TYPE_CHECKING:
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory


class Importer:
    """Writes batches into a store in order, embedding one batch ahead (use it as a context manager:
    its threads end with it)."""

    def __init__(self, store: PersistentMemory):
        self.store = store
        self._embedding = ThreadPoolExecutor(1, thread_name_prefix="import-embed")
        self._opening = ThreadPoolExecutor(1, thread_name_prefix="import-open")

    def __enter__(self) -> Importer:
        self._opened = self._opening.submit(self.store.mem0_store.open)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._embedding.shutdown(wait=True, cancel_futures=True)
        self._opening.shutdown(wait=True, cancel_futures=True)

    def write(self, batches: Iterable[Items]) -> Iterator[tuple[Items, list[RecordOutcome]]]:
        """Each batch with the outcome of each of its records, as ``record_many`` gives them. The texts
        embedded ahead are those the store did not hold when the batch was read (a text the batch
        before adds is embedded for nothing, never stored twice: ``record_many`` looks again)."""
        ahead: tuple[Items, Future[Vectors]] | None = None
        for batch in batches:
            texts = [] if self.store.bulk.extracts else self.store.bulk.new_texts(batch)
            embedding = self._embedding.submit(self._vectors, texts)
            if ahead is not None:
                yield ahead[0], self._record(*ahead)
            ahead = (batch, embedding)
        if ahead is not None:
            yield ahead[0], self._record(*ahead)

    def _vectors(self, texts: list[str]) -> Vectors:
        return dict(zip(texts, self.store.embedding.stored_vectors(texts), strict=True))

    def _record(self, batch: Items, embedding: Future[Vectors]) -> list[RecordOutcome]:
        ready = embedding.result()
        self._opened.result()  # a store that cannot be opened fails here, before anything is written
        try:
            return self.store.record_many(batch, ready)
        finally:
            del ready
            release_freed_memory()


def release_freed_memory() -> None:
    """Give the C heap's freed memory back to the system (glibc's ``malloc_trim``; nothing elsewhere).
    A batch's texts, token encodings and vectors are made in one thread and freed in another, and
    glibc keeps what a thread's arena freed: a 2 MB file of long lines held 224 MB of anonymous memory
    after five batches without this, 184 MB with it (the import's peak follows)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc
        return None

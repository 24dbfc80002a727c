"""A local store folder: held by one process at a time (an exclusive lock on ``.lock``, the file and
lock qdrant-client's local mode took, so older versions and this one keep out of each other), with one
engine shard per collection under ``shards/``. A folder in qdrant-client's local layout is moved into
shards when first opened (``moving``)."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from massgen_cli.errors import MemoryStoreError

Damaged = Callable[[str, BaseException], str]
"""The message for a damaged part of the folder (named in words) and the error reading it gave."""

SHARDS = "shards"
LOCK_FILE = ".lock"
REOPEN_AFTER_POINTS = 4096
"""Points written to a shard before it is closed and opened again. The engine writes through memory
maps whose written pages stay resident (and count in the process's RSS) while the shard is open;
reopening lets them go. Measured: 20,000 points in batches of 256 held 62 MB more without it, 17 MB
with it every 2,048 points, and a reopen takes about 0.1 s."""

T = TypeVar("T")


class FolderHeld(MemoryStoreError):
    """Another process holds the folder."""


class EdgeFolder:
    """The shards of one local folder, for this process (open it once: ``vector_stores``)."""

    def __init__(self, path: Path, damaged: Damaged):
        self.path = path
        self.damaged = damaged
        path.mkdir(parents=True, exist_ok=True)
        self._lock_file = _hold(path / LOCK_FILE)
        self._collections: dict[str, EdgeCollection] = {}
        self._guard = threading.Lock()
        try:
            from massgen_cli.memory.longterm.store.edge.moving import move_local_layout

            move_local_layout(path, path / SHARDS, damaged)
        except BaseException:
            self.close()
            raise

    def collection(self, name: str, dimensions: int) -> EdgeCollection:
        """The collection ``name``'s shard, made when it does not exist yet."""
        with self._guard:
            if name not in self._collections:
                self._collections[name] = EdgeCollection(self.path / SHARDS / name, dimensions, self.damaged)
            return self._collections[name]

    def collection_names(self) -> list[str]:
        folder = self.path / SHARDS
        return (
            sorted(p.name for p in folder.iterdir() if p.is_dir() and "." not in p.name)
            if folder.is_dir()
            else []
        )

    def close(self) -> None:
        with self._guard:
            for collection in self._collections.values():
                collection.close()
            self._collections.clear()
        if not self._lock_file.closed:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()


def _hold(lock: Path) -> Any:
    """``lock`` opened and locked for this process; ``FolderHeld`` when another process has it."""
    if not lock.exists():
        lock.write_text("tmp lock file")
    handle = lock.open("r+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise FolderHeld(f"{lock.parent} is held by another process") from None
    return handle


class EdgeCollection:
    """One collection's shard: every write flushed before it returns (the shard keeps no write-ahead log;
    the index's write journal covers a process that dies between the two stores), reopened after
    ``REOPEN_AFTER_POINTS`` written points, one call at a time."""

    def __init__(self, path: Path, dimensions: int, damaged: Damaged):
        self.path = path
        self.dimensions = dimensions
        self.damaged = damaged
        self._lock = threading.RLock()
        self._written = 0
        self._shard: Any = None

    def read(self, call: Callable[[Any], T]) -> T:
        """``call(shard)``, for a query, a scroll or a retrieve."""
        with self._lock:
            return call(self._open())

    def write(self, operation: Any, points: int = 0) -> None:
        """Apply ``operation`` (of ``points`` new or changed points) and flush it to disk."""
        with self._lock:
            shard = self._open()
            shard.update(operation)
            shard.flush()
            self._written += points
            if self._written >= REOPEN_AFTER_POINTS:
                self.close()

    def drop(self) -> None:
        """Remove the collection's shard and its files."""
        with self._lock:
            self.close()
            shutil.rmtree(self.path, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._shard.close()
            self._shard, self._written = None, 0

    def _open(self) -> Any:
        if self._shard is None:
            self._shard = open_shard(self.path, self.dimensions, self.damaged)
        return self._shard


def shard_config(dimensions: int) -> Any:
    """Dense cosine vectors and payloads on disk (read through the page cache), no write-ahead log."""
    from qdrant_edge import Distance, EdgeConfig, EdgeVectorParams, Memory

    vectors = EdgeVectorParams(size=dimensions, distance=Distance.Cosine, on_disk=True)
    return EdgeConfig(vectors={"": vectors}, payload_memory=Memory.Cold, wal_enabled=False)


def open_shard(path: Path, dimensions: int, damaged: Damaged) -> Any:
    """The shard at ``path``, made when missing; a shard the engine cannot load is one
    ``MemoryStoreError`` that names it (nothing in it is changed)."""
    from qdrant_edge import EdgeShard

    if not path.exists():
        return EdgeShard.create(str(path), shard_config(dimensions))
    with _engine_failure(path, damaged):
        return EdgeShard.load(str(path))


@contextlib.contextmanager
def _engine_failure(path: Path, damaged: Damaged) -> Iterator[None]:
    try:
        yield
    except Exception as error:  # the engine raises its errors as plain exceptions
        raise MemoryStoreError(damaged(f"its shard {path}", error)) from error
    except BaseException as error:  # a panic in the engine (pyo3's PanicException)
        if type(error).__name__ != "PanicException":
            raise
        raise MemoryStoreError(damaged(f"its shard {path}", error)) from error

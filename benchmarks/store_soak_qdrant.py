"""The soak of ``store_soak.py`` on Qdrant's in-process engine (qdrant-client's local mode, the same API
as a Qdrant server), for the parts it can run: N writers, each with a state folder of its own (as on N
machines), record their lines into one Qdrant store while M readers keep opening it and searching it,
and the server is cut right after one of mem0's writes (every request fails for a while: the write is
left half-done and its undo cannot reach the server, as a writer killed there leaves it); each writer
records again what failed. Afterwards the first open "ten minutes later" (Qdrant has no connections to
ask whether a writer lives, so only an entry older than that is finished by another process) finishes
what the journal kept, and every line must be one memory with its source, mem0's collection and the
index holding the same memories.

What it cannot run: the engine lives in one process, so writers and readers are threads here, never
processes, and none is killed with SIGKILL; a Qdrant server (which the store supports) cannot be
installed on the build machines. The in-process engine of ``qdrant-edge-py`` is not a store backend
(the store speaks qdrant-client's API), so it is not soaked.

Prints lines, writers, readers, seconds, requests refused by the cut, writes that failed and were
made again (and how many of those failures were not a ``MemoryStoreError``), reader runs and failures,
orphans left before the late open, then lost, doubled and orphans (mem0's points without a memory of
the index, and memories without their point): each must be 0.

Usage: python benchmarks/store_soak_qdrant.py [--lines 1000] [--writers 4] [--readers 4]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from store_soak import Readers  # noqa: E402  (the readers of the PostgreSQL soak, reading this store)

SERVER = "http://qdrant-soak.invalid:6333"
"""The address the configs name; this process reaches the in-process engine there."""
ANSWERING_AGAIN_S = 120.0
"""The longest a writer waits for the server to answer again before it records again what failed."""
CUT_REQUESTS = 40
"""The fewest requests the cut refuses, from the one after the chosen mem0 write on; it lasts until the
writer whose write it cut has met it too (readers' requests alone may use up the count)."""


class CuttableServer:
    """The engine's methods, one request at a time (as a server applies each), refusing requests as an
    unreachable server does while cut; ``cut_after_write`` cuts it right after the n-th upsert into
    mem0's collection, until ``CUT_REQUESTS`` were refused and the writer of that upsert was refused
    once."""

    def __init__(self, engine: Any, collection: str, cut_after_write: int):
        self.engine, self.collection = engine, collection
        self.lock = threading.RLock()
        self.writes_seen, self.cut_after_write = 0, cut_after_write
        self.refusing = self.refused = 0
        self.cut_writer: threading.Thread | None = None
        self.answering = threading.Event()
        """Set while no cut is on: what a writer waits for before it records again what failed."""
        self.answering.set()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.engine, name)
        if not callable(found):
            return found

        @functools.wraps(found)
        def request(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                if self.refusing or self.cut_writer is not None:
                    self.refusing = max(0, self.refusing - 1)
                    if self.cut_writer is threading.current_thread():
                        self.cut_writer = None
                    if not self.refusing and self.cut_writer is None:
                        self.answering.set()
                    self.refused += 1
                    raise ConnectionError("the connection to the server was cut")
                answer = found(*args, **kwargs)
                self._maybe_cut(name, args, kwargs)
                return answer

        return request

    def _maybe_cut(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        target = kwargs.get("collection_name", args[0] if args else None)
        if name == "upsert" and target == self.collection:
            self.writes_seen += 1
            if self.writes_seen == self.cut_after_write:
                self.refusing = CUT_REQUESTS
                self.answering.clear()
                here = threading.current_thread()
                self.cut_writer = here if isinstance(here, _Writer) else None  # its next request meets it


def soak(lines: int, writers: int, readers: int) -> dict[str, float]:
    from massgen_cli.memory.longterm.store.vector_stores import share_server_client

    collection = f"soak_{uuid.uuid4().hex[:10]}"
    engine = _in_process_engine(collection, cut_after_write=max(2, lines // writers // 2))
    share_server_client(_settings(collection), engine)
    texts = {f"w{n}": _lines(f"w{n}", lines // writers) for n in range(writers)}
    with tempfile.TemporaryDirectory(prefix="massgen-soak-qdrant-") as name:
        folder = Path(name)
        started = time.perf_counter()
        reading = Readers(functools.partial(_search, collection, folder), readers)
        reading.start()
        try:
            writing = [_Writer(collection, folder / key, texts[key], engine._client) for key in texts]
            for writer in writing:
                writer.start()
            for writer in writing:
                writer.join()
        finally:
            reading.stop()
        seconds = time.perf_counter() - started
        left = _count(engine, collection)
        _open_late(collection, folder / "late")
    found = _count(engine, collection)
    expected = {text for batch in texts.values() for text in batch}
    return {
        "lines": len(expected),
        "writers": writers,
        "readers": readers,
        "seconds": round(seconds, 1),
        "requests_refused": engine._client.refused,
        "writes_made_again": sum(writer.failed for writer in writing),
        "failures_not_named_by_the_store": sum(writer.unnamed for writer in writing),
        "writers_failed": sum(writer.error is not None for writer in writing),
        "reader_runs": reading.runs,
        "reader_failures": reading.failures,
        "orphans_before_late_open": left["orphans"],
        "lost": len(expected - found["texts"]),
        "doubled": found["doubled"],
        "orphans": found["orphans"],
    }


def _in_process_engine(collection: str, cut_after_write: int) -> Any:
    from qdrant_client import QdrantClient

    client = QdrantClient(location=":memory:")
    client._client = CuttableServer(client._client, collection, cut_after_write)
    return client


def _settings(collection: str) -> Any:
    from massgen_cli.config.memory import PersistentMemoryConfig

    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "qdrant",
            "qdrant": {"mode": "server", "url": SERVER, "collection_name": collection},
        }
    )


def _store(collection: str, state: Path) -> Any:
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    return PersistentMemory(_settings(collection), state, domain="general", task_type="general")


def _lines(writer: str, count: int) -> list[str]:
    return [
        f"{writer} noted on day {n}: the heron reached tower {n * 7 % 97} by the mill." for n in range(count)
    ]


class _Writer(threading.Thread):
    """Records its lines one by one in a store of its own; what fails is recorded again at the end, once
    the server answers again, until it is stored (as a re-import does). A failure the store did not
    name (not a ``MemoryStoreError``) is counted apart and its first said."""

    def __init__(self, collection: str, state: Path, texts: list[str], server: CuttableServer):
        super().__init__(name=f"writer-{state.name}")
        self.collection, self.state, self.texts, self.server = collection, state, texts, server
        self.failed = self.unnamed = 0
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            store = _store(self.collection, self.state)
            waiting = list(self.texts)
            for _ in range(20):
                waiting = [text for text in waiting if not self._stored(store, text)]
                if not waiting:
                    break
                # Not at once: a cut lasts until its writer meets it, and a writer that raced through
                # its rounds meanwhile would give its lines up.
                self.server.answering.wait(ANSWERING_AGAIN_S)
            store.close()
        except Exception as error:  # counted in the figures and said: the soak never hides it
            self.error = error
            print(f"{self.name} failed: {error!r}", file=sys.stderr)

    def _stored(self, store: Any, text: str) -> bool:
        from massgen_cli.errors import MemoryStoreError
        from massgen_cli.memory.longterm.record.memories import RecordContext

        try:
            store.record(
                [{"role": "user", "content": text}], RecordContext("importer", "soak", 0), verbatim=True
            )
        except Exception as error:
            self.failed += 1
            if not isinstance(error, MemoryStoreError):
                self.unnamed += 1
                if self.unnamed == 1:
                    print(f"{self.name}: a write failed with {error!r}", file=sys.stderr)
            return False
        return True


def _search(collection: str, folder: Path, number: int) -> bool:
    """Reader ``number`` opens the store (each open reconciles its journal) and searches it; False when
    it meets the cut (it opens again)."""
    try:
        store = _store(collection, folder / f"reader{number}")
        store.mem0  # noqa: B018 (opens mem0, which finishes the journal's old entries)
        store.search("heron tower", limit=3)
        store.close()
    except Exception:  # counted: a reader that meets the cut fails and opens again
        return False
    return True


def _open_late(collection: str, state: Path) -> None:
    """The first open once a writer's unfinished entry is old enough for another process to finish
    (``PENDING_GRACE_S``): the soak stands in for the wait by making every entry that old."""
    from massgen_cli.memory.longterm.store.qdrant import records

    grace, records.PENDING_GRACE_S = records.PENDING_GRACE_S, -1.0
    try:
        store = _store(collection, state)
        store.mem0  # noqa: B018
        store.close()
    finally:
        records.PENDING_GRACE_S = grace


def _count(client: Any, collection: str) -> dict[str, Any]:
    points = {str(point.id) for point in _every(client, collection)}
    memories = [
        point.payload for point in _every(client, f"{collection}_index", payload=["memory_id", "text"])
    ]
    memory_ids = {str(payload["memory_id"]) for payload in memories if "memory_id" in payload}
    texts = [str(payload["text"]) for payload in memories if "text" in payload]
    return {
        "texts": set(texts),
        "doubled": len(texts) - len(set(texts)),
        "orphans": len(points - memory_ids) + len(memory_ids - points),
    }


def _every(client: Any, collection: str, payload: Any = False) -> list[Any]:
    found, offset = [], None
    while True:
        points, offset = client.scroll(collection, limit=512, offset=offset, with_payload=payload)
        found += points
        if offset is None:
            return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=4)
    args = parser.parse_args()
    figures = soak(args.lines, args.writers, args.readers)
    for name, value in figures.items():
        print(f"{name:>26}: {value}")


if __name__ == "__main__":
    main()

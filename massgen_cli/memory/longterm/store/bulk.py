"""Many verbatim records into mem0's vector store at once (imports): for each, the point and the history
row that mem0's ``add`` with ``infer=False`` writes for a one-message record, all in one insert of the
vector store and one transaction of the history, each committed once. mem0 2.2.1 writes and commits
every record on its own, and local Qdrant then syncs the disk once per point: on a busy disk most of
an import's time. Written against mem0 2.2.1's ``add`` (``_add_to_vector_store``, ``_create_memory``),
less the point's text (``POINT_WITHOUT_TEXT``); recording one record at a time writes through it too."""

from __future__ import annotations

import contextlib
import hashlib
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from massgen_cli.memory.longterm.store.journal import NAMESPACE
from massgen_cli.memory.longterm.store.vectors import vector_text

POINT_WITHOUT_TEXT = ("data", "text_lemmatized")
"""What mem0's verbatim ``add`` puts in a point that ours leaves out: the text, and again as words for
mem0's keyword search. The index holds each memory's text, and every search and listing reads it there;
nothing reads a point's text. Local Qdrant keeps every point's payload in the process as Python objects
(and every later process that opens the store loads it again): the two texts were 3 KB of the 10 KB a
point of 1.4 KB of text cost there."""
_HISTORY_ROW = (
    "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
    "is_deleted, actor_id, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class VerbatimRecord:
    """One message to store as it is: its text, its role, the metadata its point carries, its vector."""

    text: str
    role: str
    metadata: dict[str, Any]
    vector: Sequence[float]


def add_verbatim(memory: Any, records: list[VerbatimRecord]) -> list[str]:
    """Store ``records`` in mem0's ``memory`` as its ``add(..., user_id=NAMESPACE, infer=False)`` stores
    each, but for the text: a point carries no ``data`` nor ``text_lemmatized`` (``POINT_WITHOUT_TEXT``);
    the ids of their points, in order."""
    from mem0.memory.main import _build_filters_and_metadata

    if not records:
        return []
    ids, payloads, history = [], [], []
    for record in records:
        # A deep copy of the metadata, as ``add`` makes it.
        template, _ = _build_filters_and_metadata(user_id=NAMESPACE, input_metadata=record.metadata)
        payload = {**template, "role": record.role}
        payload["hash"] = hashlib.md5(record.text.encode()).hexdigest()
        payload.setdefault("created_at", datetime.now(UTC).isoformat())
        payload["updated_at"] = payload["created_at"]
        memory_id = str(uuid.uuid4())
        ids.append(memory_id)
        payloads.append(payload)
        history.append(
            (str(uuid.uuid4()), memory_id, None, record.text, "ADD", payload["created_at"],
             payload["updated_at"], 0, payload.get("actor_id"), payload.get("role"))
        )  # fmt: skip
    store = memory.vector_store
    with one_commit(store):
        vectors = [_vector(store, record.vector) for record in records]
        store.insert(vectors=vectors, ids=ids, payloads=payloads)
    _write_history(memory.db, history)
    return ids


@contextlib.contextmanager
def one_commit(store: Any) -> Iterator[None]:
    """Points a local Qdrant folder's collection takes inside are committed to its file once, at the
    end (qdrant-client's local mode commits each point: a disk sync each); any other store is left as
    it is."""
    persistence = _local_persistence(store)
    if persistence is None:
        yield
        return
    connection = persistence.storage
    persistence.storage = _HeldCommits(connection)
    try:
        yield
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    finally:
        persistence.storage = connection


def _vector(store: Any, vector: Sequence[float]) -> Any:
    """A vector as ``store`` takes it: a list, or for pgvector its text (``store.vectors.vector_text``,
    which PostgreSQL reads as the column's type: the same float32 values, without the slow adaptation of
    a list of floats to an array)."""
    pgvector = sys.modules.get("mem0.vector_stores.pgvector")  # loaded when the store is one
    if pgvector is not None and isinstance(store, pgvector.PGVector):
        return vector_text(vector)
    return list(map(float, vector))


def _local_persistence(store: Any) -> Any:
    """The file behind a mem0 Qdrant store's collection in local mode (None elsewhere)."""
    local = getattr(getattr(store, "client", None), "_client", None)
    collections = getattr(local, "collections", None)
    if not isinstance(collections, dict):
        return None
    collection = collections.get(getattr(store, "collection_name", None))
    return getattr(collection, "storage", None)


class _HeldCommits:
    """A SQLite connection whose ``with`` blocks leave the transaction open for ``one_commit`` to
    commit."""

    def __init__(self, connection: Any):
        self.connection = connection

    def execute(self, *arguments: Any) -> Any:
        return self.connection.execute(*arguments)

    def __enter__(self) -> _HeldCommits:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _write_history(db: Any, rows: list[tuple[Any, ...]]) -> None:
    """mem0's history rows of the new points (what its ``add_history`` writes for each), in one
    transaction."""
    with db._lock:
        db.connection.execute("BEGIN")
        try:
            db.connection.executemany(_HISTORY_ROW, rows)
            db.connection.execute("COMMIT")
        except BaseException:
            db.connection.execute("ROLLBACK")
            raise

"""Many verbatim records into mem0's vector store at once (imports): for each, the point and the history
row that mem0's ``add`` with ``infer=False`` writes for a one-message record, all in one insert of the
vector store and one transaction of the history, each committed once (mem0 2.2.1 writes and commits
every record on its own: on a busy disk most of an import's time). Written against mem0 2.2.1's
``add`` (``_add_to_vector_store``, ``_create_memory``), less the point's text (``POINT_WITHOUT_TEXT``);
the tests hold the points and rows equal to what its ``add`` writes otherwise. Recording one record at
a time writes through it too."""

from __future__ import annotations

import copy
import hashlib
import sqlite3
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from massgen_cli.memory.longterm.store.journal import NAMESPACE
from massgen_cli.memory.longterm.store.vectors import vector_text

POINT_WITHOUT_TEXT = ("data", "text_lemmatized")
"""What mem0's verbatim ``add`` puts in a point that ours leaves out: the text, and again as words for
mem0's keyword search. The index holds each memory's text, and every search and listing reads it there;
nothing reads a point's text (in qdrant-client's local mode the two texts were 3 KB of the 10 KB a
point of 1.4 KB of text cost the process)."""
_IDENTITY_KEYS = frozenset({"user_id", "agent_id", "run_id", "actor_id"})
"""The keys mem0 2.2.1 keeps out of a record's metadata (``_IDENTITY_KEYS``): they name its scope."""
_HISTORY_TABLE = """CREATE TABLE IF NOT EXISTS history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT,
    new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT,
    role TEXT)"""
"""mem0 2.2.1's history table (``SQLiteManager._create_history_table``)."""
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
    each, but for the text (``POINT_WITHOUT_TEXT``); the ids of their points, in order."""
    from mem0.memory.main import _build_filters_and_metadata

    def template(metadata: dict[str, Any]) -> dict[str, Any]:
        return _build_filters_and_metadata(user_id=NAMESPACE, input_metadata=metadata)[0]

    ids, payloads, history = verbatim_rows(records, template)
    if not ids:
        return []
    store = memory.vector_store
    store.insert(vectors=[_vector(store, record.vector) for record in records], ids=ids, payloads=payloads)
    _write_history(memory.db._lock, memory.db.connection, history)
    return ids


def add_verbatim_locally(store: Any, history_file: Path, records: list[VerbatimRecord]) -> list[str]:
    """``add_verbatim`` into the local folder's vector store (``edge.EdgeVectorStore``) and mem0's
    history file without mem0 itself, whose import (with qdrant-client's and OpenAI's) holds about
    95 MB: the same points and the same rows in the same table, which mem0 reads when it opens the
    file."""
    ids, payloads, history = verbatim_rows(records, local_template)
    if not ids:
        return []
    store.insert(vectors=[list(map(float, r.vector)) for r in records], ids=ids, payloads=payloads)
    history_file.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(history_file, check_same_thread=False)
    try:
        connection.execute(_HISTORY_TABLE)
        _write_history(threading.Lock(), connection, history)
    finally:
        connection.close()
    return ids


def local_template(metadata: dict[str, Any]) -> dict[str, Any]:
    """What mem0 2.2.1's ``_build_filters_and_metadata(user_id=NAMESPACE, input_metadata=metadata)``
    makes a point's payload of: a deep copy of the metadata without the keys that name a scope, and
    the namespace's ``user_id``."""
    kept = {key: value for key, value in copy.deepcopy(metadata).items() if key not in _IDENTITY_KEYS}
    return {**kept, "user_id": NAMESPACE}


def verbatim_rows(
    records: list[VerbatimRecord],
    template: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[list[str], list[dict[str, Any]], list[tuple[Any, ...]]]:
    """Each record's point id, payload and history row, as mem0's ``add`` makes them."""
    ids, payloads, history = [], [], []
    for record in records:
        payload = {**template(record.metadata), "role": record.role}
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
    return ids, payloads, history


def _vector(store: Any, vector: Sequence[float]) -> Any:
    """A vector as ``store`` takes it: a list, or for pgvector its text (``store.vectors.vector_text``,
    which PostgreSQL reads as the column's type: the same float32 values, without the slow adaptation of
    a list of floats to an array)."""
    pgvector = sys.modules.get("mem0.vector_stores.pgvector")  # loaded when the store is one
    if pgvector is not None and isinstance(store, pgvector.PGVector):
        return vector_text(vector)
    return list(map(float, vector))


def _write_history(lock: Any, connection: Any, rows: list[tuple[Any, ...]]) -> None:
    """mem0's history rows of the new points (what its ``add_history`` writes for each), in one
    transaction."""
    with lock:
        connection.execute("BEGIN")
        try:
            connection.executemany(_HISTORY_ROW, rows)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

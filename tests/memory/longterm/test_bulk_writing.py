"""Recording many records at once (imports) stores what recording them one by one stores: the same
memories, sources in the same order, names, terms and vectors in the index, and the same points and
history rows in mem0's store, written in one insert and kept on disk. An index's batch is one
transaction, which a key another writer took leaves standing."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage, Source
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.journal import NAMESPACE
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.server.index import ServerIndex
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.memory.conftest import open_store

LONG = " ".join(f"word{n}" for n in range(300))
ITEMS: list[tuple[RecordMessage, RecordContext]] = [
    ({"role": "user", "content": "The ferry leaves at 06:40.", "metadata": {"speaker": "Ann"}},
     RecordContext("import", "talk", 0)),
    ({"role": "user", "content": "Known before the batch."}, RecordContext("import", "talk", 0)),
    ({"role": "assistant", "content": "The pier is number 3."}, RecordContext("bob", "talk", 1)),
    ({"role": "user", "content": "The ferry leaves at 06:40.", "metadata": {"speaker": "Ann"}},
     RecordContext("import", "other", 0)),
    ({"role": "user", "content": "The ferry leaves at 06:40.", "metadata": {"speaker": "Bo"}},
     RecordContext("import", "talk", 0)),
    ({"role": "system", "content": "Never recorded."}, RecordContext("import", "talk", 0)),
    ({"role": "user", "content": "   "}, RecordContext("import", "talk", 0)),
    ({"role": "assistant", "content": LONG, "metadata": {"kind": "log"}}, RecordContext("bob", "talk", 2)),
]  # fmt: skip
"""A line said twice (two sessions), the same words by another speaker (another memory with the same
text), one known before, a system message and an empty one (neither recorded), a text in two chunks."""


def stored(store: PersistentMemory) -> dict[str, Any]:
    """What ``store`` holds, by key (ids and clock times left out): the index's rows, its sources in
    the order they were recorded, mem0's points and history rows."""
    db = store.index._db  # type: ignore[attr-defined]
    keys = dict(db.execute("SELECT id, key FROM memories").fetchall())
    columns = "key, text, domain, task_type, role, expires_at IS NULL, extra, vector, indexed, length, day"
    rows = sorted(db.execute(f"SELECT {columns} FROM memories").fetchall())
    sources = [
        (keys[row[0]], *row[1:])
        for row in db.execute(
            "SELECT memory_id, agent_id, session_id, turn, attempt, extra FROM sources ORDER BY rowid"
        )
    ]
    terms = sorted((keys[i], body) for i, body in db.execute("SELECT id, body FROM memories_fts"))
    names = sorted((keys[i], kind, name) for i, kind, name in db.execute("SELECT * FROM names"))
    return {"memories": rows, "sources": sources, "terms": terms, "names": names, **mem0_rows(store)}


def mem0_rows(store: PersistentMemory) -> dict[str, Any]:
    points = store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=1000)["results"]
    history_db = sqlite3.connect(store.state_dir / "memory" / "history.db")
    history = sorted(
        history_db.execute("SELECT old_memory, new_memory, event, is_deleted, actor_id, role FROM history")
    )
    history_db.close()
    kept = [
        {k: v for k, v in point.items() if k not in ("id", "created_at", "updated_at")} for point in points
    ]
    for point in kept:
        point["metadata"].pop("massgen_write")
    return {"points": sorted(kept, key=lambda point: point["metadata"]["key"]), "history": history}


def test_many_records_at_once_are_stored_as_one_by_one(tmp_path):
    one_by_one, at_once = open_store(tmp_path / "one"), open_store(tmp_path / "many")
    try:
        for store in (one_by_one, at_once):
            store.record([ITEMS[1][0]], ITEMS[1][1])
        outcomes = [one_by_one.record([message], context) for message, context in ITEMS]
        together = at_once.record_many(ITEMS)
        assert [(len(o.added), len(o.existing), o.verbatim) for o in together] == [
            (len(o.added), len(o.existing), o.verbatim) for o in outcomes
        ]
        assert [len(o.added) for o in outcomes] == [1, 0, 1, 0, 1, 0, 0, 2]
        assert [len(o.existing) for o in outcomes] == [0, 1, 0, 1, 0, 0, 0, 0]
        assert together[3].existing == together[0].added, "the same line again is a source of it"
        assert stored(at_once) == stored(one_by_one)
    finally:
        for store in (one_by_one, at_once):
            store.close()
        close_clients()


def test_points_written_at_once_are_on_disk_and_nothing_is_left_to_reconcile(tmp_path):
    store = open_store(tmp_path / "state")
    try:
        texts = [f"Line {n} of the harbour log." for n in range(40)]
        store.record_many([({"role": "user", "content": text}, RecordContext("a", "s", 1)) for text in texts])
        assert store.index.pending() == []
    finally:
        store.close()
        close_clients()
    on_disk = points_on_disk(tmp_path / "state")
    assert len(on_disk) == 40, "flushed to the shard's files"
    assert not [point for point in on_disk if {"data", "text_lemmatized"} & set(point.payload)], (
        "a point carries no text: the index holds it"
    )
    reopened = open_store(tmp_path / "state")
    try:
        held = {memory.text: memory.key for memory in reopened.list_memories()}
        assert sorted(held) == sorted(texts)
        assert {point["metadata"]["key"] for point in mem0_rows(reopened)["points"]} == set(held.values())
        assert [hit.text for hit in reopened.search("harbour log line 7", limit=1)] == [texts[7]]
    finally:
        reopened.close()
        close_clients()


def points_on_disk(state: Path) -> list[Any]:
    """The points the local folder's shard holds (read by the engine itself, without the store)."""
    from qdrant_edge import EdgeShard, ScrollRequest

    shard = EdgeShard.load(str(state / "qdrant" / "shards" / "massgen_memories"))
    try:
        found, _ = shard.scroll(ScrollRequest(limit=1000, with_payload=True, with_vector=False))
    finally:
        shard.close()
    return found


FIELDS = {"domain": "general", "task_type": "general", "role": "user"}


@pytest.fixture(params=["local", "pgvector"])
def index(request, tmp_path) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    if request.param == "local":
        found: Any = MemoryIndex(tmp_path / "index.db")
    else:
        found = ServerIndex(request.getfixturevalue("pgvector_url"), f"bulk_{uuid.uuid4().hex[:10]}")
    yield found
    found.close()


def test_a_key_another_writer_took_leaves_the_rest_of_a_batch_standing(index):
    index.add("first", "k:taken", "Said before.", FIELDS, Source("a", "s", 1, 1))
    refused_at_once = []
    with index.batch() as refused_later:
        index.add("second", "k:new", "Said now.", FIELDS, Source("a", "s", 2, 1))
        try:
            index.add("third", "k:taken", "Said before.", FIELDS, Source("b", "s", 2, 1))
        except KeyTaken:
            refused_at_once.append("third")
        assert index.add_source("first", Source("b", "s", 2, 1))
    if isinstance(index, ServerIndex):  # pipelined: no add waits for the server; answered at the end
        assert (refused_at_once, refused_later) == ([], [("third", "k:taken")])
    else:
        assert (refused_at_once, refused_later) == (["third"], [])
    assert (index.id_for_key("k:new"), index.id_for_key("k:taken")) == ("second", "first")
    assert not index.has("third")
    assert [s.agent_id for s in index.get(["first"])["first"].sources] == ["a", "b"]


def test_a_batch_that_fails_writes_nothing(index):
    with pytest.raises(RuntimeError), index.batch():
        index.add("second", "k:new", "Said now.", FIELDS, Source("a", "s", 2, 1))
        raise RuntimeError("the vector store went away")
    assert index.id_for_key("k:new") is None and index.empty()


def test_a_key_taken_while_a_server_batch_was_written_becomes_a_source(tmp_path, pgvector_url, monkeypatch):
    """Another folder stores the same line between this import's look-up of known keys and its batch:
    the server refuses the add when the batch ends, and the line becomes a source of that memory, its
    point gone, as recording it alone would leave it."""
    from tests.memory.longterm.test_server_truth import settings

    collection = f"bulk_{uuid.uuid4().hex[:10]}"
    first, second = (
        PersistentMemory(
            settings(pgvector_url, collection), tmp_path / name, domain="general", task_type="general"
        )
        for name in ("first", "second")
    )
    try:
        line: RecordMessage = {"role": "user", "content": "The ferry leaves at 06:40."}
        other: RecordMessage = {"role": "user", "content": "The pier is number 3."}
        [held] = first.record([line], RecordContext("agent_a", "talk", 0)).added
        monkeypatch.setattr(second.index, "ids_for_keys", lambda keys: {})  # the look-up came first
        late, fresh = second.record_many(
            [(line, RecordContext("agent_b", "talk", 0)), (other, RecordContext("agent_b", "talk", 0))]
        )
        assert (late.added, late.existing) == ([], [held])
        assert len(fresh.added) == 1 and fresh.existing == []
        memories = {memory.text: memory for memory in first.list_memories()}
        assert sorted(memories) == [line["content"], other["content"]]
        assert [s.agent_id for s in memories[line["content"]].sources] == ["agent_a", "agent_b"]
        points = first.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]
        assert sorted(point["metadata"]["key"] for point in points) == sorted(
            memory.key for memory in memories.values()
        ), "no orphan point"
    finally:
        first.close()
        second.close()
        close_clients()

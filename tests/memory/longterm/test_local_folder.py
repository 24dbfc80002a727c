"""The local default store: Qdrant's engine in process, one shard per collection in the local folder,
behind a mem0 vector store. mem0's filters admit what mem0's own Qdrant store admits; a point holds
its text once; an import writes there without mem0; a folder of the earlier layout (qdrant-client's
local mode) is moved into shards once and stays searchable; a shard reopened between writes keeps
everything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.bulk import POINT_WITHOUT_TEXT
from massgen_cli.memory.longterm.store.edge import folder as edge_folder
from massgen_cli.memory.longterm.store.edge.folder import EdgeFolder
from massgen_cli.memory.longterm.store.edge.vector_store import EdgeVectorStore
from massgen_cli.memory.longterm.store.journal import NAMESPACE
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.memory.conftest import open_store

LINES = [
    "The ferry to Tillmore leaves at 06:40 from pier 3.",
    "Leilani's favourite board game is Carcassonne.",
    "The lighthouse keeper rings the bell at six.",
    "Ana keeps the harbour log in a blue binder.",
]


def record_lines(state: Path) -> list[str]:
    """The lines recorded in ``state``'s store, one session each; their memory ids."""
    store = open_store(state)
    try:
        ids = []
        for n, line in enumerate(LINES):
            outcome = store.record([{"role": "user", "content": line}], RecordContext("keeper", f"s{n}", 1))
            ids += outcome.added
        return ids
    finally:
        store.close()
        close_clients()


def shard_points(shard: Path) -> list[Any]:
    """The points of the shard at ``shard``, read by the engine itself (with their vectors)."""
    from qdrant_edge import EdgeShard, ScrollRequest

    opened = EdgeShard.load(str(shard))
    try:
        found, _ = opened.scroll(ScrollRequest(limit=1000, with_payload=True, with_vector=True))
    finally:
        opened.close()
    return found


def test_a_point_holds_no_text_and_mem0_reads_it_back(tmp_path: Path):
    ids = record_lines(tmp_path / "state")
    points = shard_points(tmp_path / "state" / "qdrant" / "shards" / "massgen_memories")
    assert sorted(str(point.id) for point in points) == sorted(ids)
    for point in points:
        assert not set(POINT_WITHOUT_TEXT) & set(point.payload), "the index holds the text"
        assert point.payload["user_id"] == NAMESPACE
    store = open_store(tmp_path / "state")
    try:
        found = store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]
        assert sorted(item["id"] for item in found) == sorted(ids)
        assert sorted(memory.text for memory in store.list_memories()) == sorted(LINES)
        assert [hit.text for hit in store.search("When does the ferry leave?", limit=1)] == [LINES[0]]
    finally:
        store.close()
        close_clients()


FILTERS: list[dict[str, Any]] = [
    {"user_id": NAMESPACE},
    {"session": "s1"},
    {"session": ["s0", "s2"]},
    {"session": {"in": ["s1", "s3"]}},
    {"session": {"nin": ["s1", "s3"]}},
    {"session": {"ne": "s2"}},
    {"turn": {"lt": 3}},
    {"turn": {"gte": 2, "lte": 3}},
    {"created": {"gt": "2025-01-02T00:00:00+00:00"}},
    {"session": "*", "turn": 1},
    {"OR": [{"session": "s0"}, {"turn": 3}]},
    {"NOT": [{"session": "s0"}]},
    {"AND": [{"turn": {"gt": 0}}, {"$or": [{"session": "s1"}, {"session": "s2"}]}]},
]


def test_mem0_filters_admit_what_mem0s_own_qdrant_store_admits(tmp_path: Path):
    from mem0.vector_stores.qdrant import Qdrant
    from qdrant_client import QdrantClient

    theirs = Qdrant(collection_name="f", embedding_model_dims=4, client=QdrantClient(location=":memory:"))
    folder = EdgeFolder(tmp_path / "qdrant", lambda part, error: f"{part}: {error}")
    ours = EdgeVectorStore(folder, "f", 4)
    ids = [f"00000000-0000-0000-0000-00000000000{n}" for n in range(4)]
    payloads = [
        {"user_id": NAMESPACE, "session": f"s{n}", "turn": n, "created": f"2025-01-0{n + 1}T00:00:00+00:00"}
        for n in range(4)
    ]
    vectors = [[1.0, float(n), 0.5, 0.25] for n in range(4)]
    try:
        for store in (theirs, ours):
            store.insert(vectors=vectors, payloads=payloads, ids=ids)
        for filters in FILTERS:
            admitted = {str(point.id) for point in theirs.list(filters=filters, top_k=10)[0]}
            assert {point.id for point in ours.list(filters=filters, top_k=10)[0]} == admitted, filters
            assert admitted, f"{filters} admits something in mem0's own store"
            found = ours.search("q", vectors[3], top_k=10, filters=filters)
            assert {point.id for point in found} == admitted, filters
    finally:
        folder.close()


IMPORT_SCRIPT = """
import sys
from pathlib import Path
from massgen_cli.cli.memory_import import import_file
import_file(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), session=None, agent=None)
print(sorted(name for name in ("mem0", "qdrant_client", "openai") if name in sys.modules))
"""


def test_an_import_writes_the_local_folder_without_mem0_and_mem0_reads_it_after(tmp_path: Path):
    data = tmp_path / "lines.jsonl"
    data.write_text("".join(json.dumps({"content": line, "session_id": "talk"}) + "\n" for line in LINES))
    config = tmp_path / "config.yaml"
    config.write_text("memory: {enabled: true, persistent_memory: {enabled: true}}\n")
    state = tmp_path / "state"
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_SCRIPT, str(data), str(config), str(state)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", "neither mem0 nor the clients it brings were imported"
    store = open_store(state)
    try:
        found = store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]
        texts = {memory.key: memory.text for memory in store.list_memories()}
        assert sorted(texts.values()) == sorted(LINES)
        assert {item["metadata"]["key"] for item in found} == set(texts), "mem0 reads every point"
        history = store.mem0.history(found[0]["id"])
        first_text = texts[found[0]["metadata"]["key"]]
        assert [(row["event"], row["new_memory"]) for row in history] == [("ADD", first_text)]
        store.forget([found[0]["id"]])
        assert len(store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]) == 3
    finally:
        store.close()
        close_clients()


def write_earlier_layout(folder: Path, points: list[Any]) -> None:
    """``points`` in a local folder as earlier versions kept it: qdrant-client's local mode, with the
    collection mem0 made there (a dense vector and mem0's BM25 slot)."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    client.create_collection(
        "massgen_memories",
        vectors_config=models.VectorParams(size=384, distance=models.Distance.COSINE),
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    structs = [models.PointStruct(id=str(p.id), vector={"": vector_of(p)}, payload=p.payload) for p in points]
    client.upsert("massgen_memories", structs)
    client.close()


def vector_of(point: Any) -> list[float]:
    """A point's dense vector as the engine gives it back (unnamed, or named "")."""
    return point.vector[""] if isinstance(point.vector, dict) else point.vector


def test_a_folder_of_the_earlier_layout_is_moved_once_and_stays_searchable(tmp_path: Path):
    state = tmp_path / "state"
    ids = record_lines(state)
    folder = state / "qdrant"
    shard = folder / "shards" / "massgen_memories"
    points = shard_points(shard)
    for path in sorted(shard.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    shard.rmdir()
    write_earlier_layout(folder, points)
    assert (folder / "meta.json").is_file() and not shard.exists()

    store = open_store(state)
    try:
        store.mem0  # noqa: B018 (opens the folder)
        assert not (folder / "meta.json").exists() and not (folder / "collection").exists()
        moved = shard_points_through(store)
        assert sorted(moved) == sorted(ids), "every point moved, with its id"
        assert [hit.text for hit in store.search("Who keeps the harbour log?", limit=1)] == [LINES[3]]
        store.forget([ids[0]])
        assert ids[0] not in shard_points_through(store)
    finally:
        store.close()
        close_clients()
    before = {str(p.id): p.payload for p in shard_points(shard)}
    assert before == {str(p.id): p.payload for p in points if str(p.id) != ids[0]}
    open_store(state).close()  # opened again: nothing more to move
    close_clients()
    assert {str(p.id): p.payload for p in shard_points(shard)} == before


def shard_points_through(store: Any) -> list[str]:
    return [item["id"] for item in store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]]


def test_a_shard_reopened_between_writes_keeps_every_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(edge_folder, "REOPEN_AFTER_POINTS", 5)
    folder = EdgeFolder(tmp_path / "qdrant", lambda part, error: f"{part}: {error}")
    store = EdgeVectorStore(folder, "c", 4)
    try:
        for batch in range(4):
            ids = [f"00000000-0000-0000-0000-0000000000{batch}{n}" for n in range(3)]
            vectors = [[1.0, float(batch), float(n), 1.0] for n in range(3)]
            store.insert(vectors=vectors, payloads=[{"batch": batch} for _ in ids], ids=ids)
        assert store.count() == 12
        assert store.get("00000000-0000-0000-0000-000000000002") is not None
        [nearest] = store.search("q", [1.0, 3.0, 2.0, 1.0], top_k=1)
        assert nearest.id == "00000000-0000-0000-0000-000000000032"
    finally:
        folder.close()

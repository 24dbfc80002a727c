"""A folder in qdrant-client's local layout (``meta.json``, ``collection/<name>/storage.sqlite`` of
pickled points) moved into the engine's shards, once, when the folder is first opened: each
collection's points are copied a page at a time into ``shards/<name>.moving``, which becomes
``shards/<name>`` when whole; then the old collection's files go. A move cut short starts again at the
next open; a folder whose old files cannot be read is named and left as it is."""

from __future__ import annotations

import json
import pickle
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.edge.folder import Damaged, open_shard

META_FILE = "meta.json"
POINTS_FILE = "storage.sqlite"
PAGE = 256
LOCAL_DAMAGE = (
    sqlite3.DatabaseError,  # a points file that is not SQLite, or a malformed one
    pickle.UnpicklingError,  # a stored point that is not a pickle
    EOFError,  # a stored point cut short
    AttributeError,  # a pickle of something other than a point, or a collection list of the wrong shape
    ImportError,  # a pickle that names a module that does not exist
    ValueError,  # meta.json that is not JSON or UTF-8
    KeyError,
    TypeError,
)
"""What reading a local folder whose files are not what qdrant-client wrote raises (each one seen by
damaging a real store: tests/faults/test_state_faults.py)."""


def move_local_layout(folder: Path, shards: Path, damaged: Damaged) -> None:
    """Move each collection of ``folder``'s old layout into ``shards`` (nothing to do when there is
    none); the old files go once every collection is moved."""
    meta = folder / META_FILE
    if not meta.exists():
        return
    try:
        collections = json.loads(meta.read_text(encoding="utf-8"))["collections"]
        if not isinstance(collections, dict):
            raise TypeError(f"its collections are a {type(collections).__name__}, not a mapping")
        names = [str(name) for name in collections]
    except LOCAL_DAMAGE as error:
        raise MemoryStoreError(damaged(f"its collection list {meta}", error)) from error
    for name in names:
        points = folder / "collection" / name / POINTS_FILE
        if not (shards / name).exists() and points.exists():
            _move_collection(points, shards / name, _dimensions(collections[name]), damaged)
    shutil.rmtree(folder / "collection", ignore_errors=True)
    meta.unlink()


def _dimensions(config: Any) -> int | None:
    """The dense vector size an old collection was made with (None when its config does not say)."""
    vectors = config.get("vectors") if isinstance(config, dict) else None
    if isinstance(vectors, dict) and isinstance(vectors.get("size"), int):
        return int(vectors["size"])
    unnamed = vectors.get("") if isinstance(vectors, dict) else None
    return (
        int(unnamed["size"]) if isinstance(unnamed, dict) and isinstance(unnamed.get("size"), int) else None
    )


def _move_collection(points_file: Path, target: Path, dimensions: int | None, damaged: Damaged) -> None:
    from qdrant_edge import Point, UpdateOperation

    moving = target.with_name(f"{target.name}.moving")
    shutil.rmtree(moving, ignore_errors=True)
    moving.parent.mkdir(parents=True, exist_ok=True)
    shard = None
    try:
        for page in _old_points(points_file):
            if shard is None:
                shard = open_shard(moving, dimensions or len(page[0][1]), damaged)
            shard.update(UpdateOperation.upsert_points([Point(i, {"": v}, p) for i, v, p in page]))
        if shard is None:  # an empty collection
            shard = open_shard(moving, dimensions or 1, damaged)
        shard.flush()
        shard.close()
    except BaseException as error:  # the half-made shard goes; the old files stay for the next open
        if shard is not None:
            shard.close()
        shutil.rmtree(moving, ignore_errors=True)
        if isinstance(error, LOCAL_DAMAGE):
            raise MemoryStoreError(damaged(f"its points file {points_file}", error)) from error
        raise
    moving.rename(target)


def _old_points(points_file: Path) -> Iterator[list[tuple[str, list[float], dict[str, Any]]]]:
    """The collection's points, ``PAGE`` at a time: id, dense vector, payload (the latest row of an id
    that older versions stored in several)."""
    connection = sqlite3.connect(f"file:{points_file}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT rowid, point FROM points ORDER BY rowid DESC")
        seen: set[str] = set()
        page: list[tuple[str, list[float], dict[str, Any]]] = []
        for _, blob in rows:
            point = pickle.loads(blob)
            point_id = str(point.id)
            if point_id in seen:
                continue
            seen.add(point_id)
            vector = point.vector.get("") if isinstance(point.vector, dict) else point.vector
            if vector is None:  # mem0 writes every point with its vector: none to search by here
                continue
            page.append((point_id, [float(x) for x in vector], dict(point.payload or {})))
            if len(page) == PAGE:
                yield page
                page = []
        if page:
            yield page
    finally:
        connection.close()

"""The vectors kept beside the local index: a new process starts from them and ranks exactly as one that
read every row from the index; a copy that is not this index's at this generation, or is damaged, is
passed over; rows added since it was kept are read from the index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index import search as index_search
from massgen_cli.memory.longterm.store.index.kept_vectors import kept_path

FIELDS = {"domain": "general", "task_type": "general", "role": "user"}
DIMENSIONS = 8


@pytest.fixture(autouse=True)
def keep_early(monkeypatch):
    monkeypatch.setattr(index_search, "KEEP_AFTER_ROWS", 5)


def vector(seed: int) -> list[float]:
    chance = random.Random(seed)
    return [chance.uniform(-1, 1) for _ in range(DIMENSIONS)]


def fill(index: MemoryIndex, numbers: range, seeds: int = 0) -> None:
    for number in numbers:
        source = Source("a", "s", 1, 1)
        index.add(f"m{number}", f"k{number}", f"Line {number}.", FIELDS, source, vector(seeds + number))


def ranking(path: Path, query: int = 999) -> list[tuple[str, float]]:
    index = MemoryIndex(path)
    try:
        return index.dense(vector(query), 10)
    finally:
        index.close()


def read_from_rows(path: Path, query: int = 999) -> list[tuple[str, float]]:
    """The ranking of a process that finds no kept copy (it reads every row from the index)."""
    kept_path(path).unlink(missing_ok=True)
    return ranking(path, query)


def test_a_new_process_starts_from_the_kept_vectors_and_ranks_the_same(tmp_path):
    path = tmp_path / "index.db"
    index = MemoryIndex(path)
    fill(index, range(20))
    index.warm()
    index.close()
    assert kept_path(path).is_file(), "kept once enough rows were read"

    reopened = MemoryIndex(path)
    reopened.warm()
    assert reopened._kept_rows == 20, "started from the copy"
    fill(reopened, range(20, 23))  # added since: read from the index
    started_from_copy = reopened.dense(vector(999), 10)
    reopened.close()
    assert started_from_copy == read_from_rows(path)
    assert {f"m{n}" for n in range(20, 23)} & set(dict(read_from_rows(path, query=21))), "new rows rank"


def test_a_copy_of_another_generation_or_index_or_damaged_is_passed_over(tmp_path):
    path = tmp_path / "index.db"
    index = MemoryIndex(path)
    fill(index, range(20))
    index.warm()
    kept = kept_path(path).read_bytes()  # holds m3
    index.delete(["m3"])  # a new generation
    index.close()
    assert not kept_path(path).exists(), "what was deleted is not left in the copy"
    kept_path(path).write_bytes(kept)  # as a process that kept it just before the delete would
    assert "m3" not in dict(ranking(path, query=3))
    assert ranking(path, query=3) == read_from_rows(path, query=3)

    other = tmp_path / "other" / "index.db"  # another index: the same ids and rowids, other vectors
    other_index = MemoryIndex(other)
    fill(other_index, range(20), seeds=100)
    other_index.close()
    expected = read_from_rows(other, query=3)
    kept_path(other).write_bytes(kept)
    assert ranking(other, query=3) == expected

    expected = read_from_rows(path, query=3)
    kept_path(path).write_bytes(b"not a copy of vectors")
    assert ranking(path, query=3) == expected

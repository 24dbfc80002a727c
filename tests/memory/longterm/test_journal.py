"""The write journal: a process that dies between the vector store's write and the index's, or between
the index's delete and the vector store's, leaves work that the next open finishes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.journal import NAMESPACE, WRITE_TOKEN
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.memory.conftest import open_store

KILL_BETWEEN_WRITES = """
import os, sys
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.record.memories import RecordContext

store = PersistentMemory(PersistentMemoryConfig(enabled=True), __import__("pathlib").Path(sys.argv[1]),
                         domain="general", task_type="general")
store.record([{"role": "user", "content": "kept before the crash"}], RecordContext("a", "s", 1))
def die(*args, **kwargs):
    os._exit(9)  # the vector store has the point; the index never gets it
store.index.add = die
store.record([{"role": "user", "content": "lost in the crash"}], RecordContext("a", "s", 2))
"""


def test_a_process_killed_between_the_two_writes_is_reconciled(tmp_path):
    state = tmp_path / "state"
    died = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILL_BETWEEN_WRITES), str(state)],
        capture_output=True,
        check=False,
    )
    assert died.returncode == 9, died.stderr
    store = open_store(state)
    try:
        assert [kind for _, kind in store.index.pending()] == ["write"], "the cut write is journalled"
        points = store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]  # opens: reconciles
        assert store.index.pending() == []
        [kept] = store.list_memories()
        assert kept.text == "kept before the crash"
        assert [p["id"] for p in points] == [kept.id], "the cut write's point is gone"
        assert all(WRITE_TOKEN in (p.get("metadata") or {}) for p in points)
        store.record([{"role": "user", "content": "lost in the crash"}], RecordContext("a", "s", 2))
        store.record([{"role": "user", "content": "kept before the crash"}], RecordContext("a", "s", 3))
        assert sorted(m.text for m in store.list_memories()) == ["kept before the crash", "lost in the crash"]
        assert len(store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=100)["results"]) == 2
    finally:
        store.close()
        close_clients()


def test_a_delete_cut_short_is_finished_on_the_next_open(tmp_path):
    state = tmp_path / "state"
    store = open_store(state)
    try:
        [memory_id] = store.record(
            [{"role": "user", "content": "to be forgotten"}], RecordContext("a", "s", 1)
        ).added
        store.index.delete([memory_id])  # the index's half; the process dies before the vector store's
        assert store.index.pending() == [(memory_id, "delete")]
        points = store.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=10)["results"]
        assert [point["id"] for point in points] == [memory_id], "the vector is still there"
    finally:
        store.close()
        close_clients()
    reopened = open_store(state)
    try:
        assert reopened.mem0.get_all(filters={"user_id": NAMESPACE}, top_k=10)["results"] == []  # opens
        assert reopened.index.pending() == []
    finally:
        reopened.close()
        close_clients()

"""Keeping the index whole: clears that take what they should (stale memories, memories shared only by
the sessions cleared) and an old index opened by several processes at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients


def _user(text: str) -> list:  # type: ignore[type-arg]
    return [{"role": "user", "content": text}]


def test_clearing_sessions_takes_their_stale_memories_and_those_they_alone_share(tmp_path):
    store = PersistentMemory(PersistentMemoryConfig(enabled=True), tmp_path, domain="d", task_type="t")
    try:
        for session in ("a", "b"):
            store.record(_user("The bridge opens at nine."), RecordContext("x", session, 1))
        store.record(_user("Alpha alone."), RecordContext("x", "a", 1))
        store.record(_user("Alpha, stale."), RecordContext("x", "a", 1))
        store.record(_user("Kept by c."), RecordContext("x", "c", 1))
        texts = {m.text: m.id for m in store.list_memories()}
        store.index.mark_stale(StaleMark(texts["Alpha, stale."], "wrong", "x", session_id="a", turn=1))
        assert store.clear(session_id="a") == 2, "its own memories, the stale one too; not the shared one"
        assert store.clear(sessions={"a", "b"}) == 1, "the memory only a and b shared"
        assert [m.text for m in store.index.all(include_stale=True)] == ["Kept by c."]
    finally:
        store.close()
        close_clients()


OPEN = (
    "import sys; from pathlib import Path; from massgen_cli.memory.longterm.store.index import MemoryIndex; "
    "MemoryIndex(Path(sys.argv[1])).close()"
)


def test_an_old_index_opened_by_several_processes_at_once_opens_in_each(tmp_path):
    path = tmp_path / "index.db"
    MemoryIndex(path).close()
    db = sqlite3.connect(path)
    for table, column in (("sources", "extra"), ("memories", "indexed"), ("memories", "length")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")  # as a store made before they existed
    db.execute("DELETE FROM meta WHERE name = 'text_form'")
    db.commit()
    db.close()
    openers = [
        subprocess.Popen([sys.executable, "-c", OPEN, str(path)], stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    failures = [p.communicate(timeout=120)[1] for p in openers if p.wait(timeout=120) != 0]
    assert failures == []
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(memories)")}
    assert {"indexed", "length"} <= columns

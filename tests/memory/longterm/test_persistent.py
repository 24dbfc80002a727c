"""The store as the program calls it, for real (mem0 over local Qdrant, the offline embedder): turn-aware
visibility through record, record_winner and search; a local store another process holds."""

from __future__ import annotations

import subprocess
import sys

import pytest

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.vector_stores import _open_local


def test_turn_aware_visibility(store):
    store.record(
        [{"role": "assistant", "content": "Winner fact: the bridge opens at noon."}],
        RecordContext("a", "s", 1),
    )
    store.record(
        [{"role": "assistant", "content": "Loser fact: the bridge is closed forever."}],
        RecordContext("b", "s", 1),
    )
    store.record(
        [{"role": "assistant", "content": "Current fact: the bridge opens at dawn."}],
        RecordContext("a", "s", 2),
    )
    store.record_winner("s", 1, "a")
    seen = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("c", "s", 2))
        )
    }
    assert seen == {"Winner fact: the bridge opens at noon."}
    own = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("b", "s", 2))
        )
    }
    assert "Loser fact: the bridge is closed forever." in own
    other_session = store.search("bridge", limit=10, scope=SearchFilter(viewer=Viewer("c", "t", 5)))
    assert other_session == []
    everywhere = store.search(
        "bridge", limit=10, scope=SearchFilter(viewer=Viewer("c", "t", 5, all_sessions=True))
    )
    assert {hit.text for hit in everywhere} == {"Winner fact: the bridge opens at noon."}


def test_a_later_source_never_makes_a_current_turn_record_visible(store):
    store.record_winner("s", 1, "a")
    store.record([{"role": "user", "content": "shared words"}], RecordContext("b", "s", 2))
    store.record([{"role": "user", "content": "shared words"}], RecordContext("a", "s", 2))
    assert store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 2))) == []
    assert store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 3))) == [], (
        "turn 2 has no winner yet"
    )
    store.record_winner("s", 2, "a")
    [hit] = store.search("shared words", limit=5, scope=SearchFilter(viewer=Viewer("c", "s", 3)))
    assert (hit.source.agent_id, hit.source.turn) == ("a", 2)


HOLDERS = {
    # an earlier version of massgen, whose local store was qdrant-client's local mode (same lock file)
    "qdrant-client": "from qdrant_client import QdrantClient; c = QdrantClient(path={path!r})",
    "massgen": (
        "from pathlib import Path; from massgen_cli.memory.longterm.store.edge.folder import EdgeFolder; "
        "f = EdgeFolder(Path({path!r}), str)"
    ),
}


@pytest.mark.parametrize("holder_kind", sorted(HOLDERS))
def test_local_lock_held_by_another_process_names_the_remedy(tmp_path, holder_kind):
    path = tmp_path / "qdrant"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLDERS[holder_kind].format(path=str(path)) + "; print('ready', flush=True); "
            "import signal; signal.pause()",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(
            MemoryStoreError, match="another massgen process is using this local memory store"
        ):
            _open_local(path)
    finally:
        holder.terminate()
        holder.wait(10)
    client = _open_local(path)  # released once the holder is gone
    try:
        assert client.collection_names() == [], "the store opens and answers"
    finally:
        client.close()

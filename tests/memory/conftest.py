"""The long-term store the memory tests share: local Qdrant and the offline embedder under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import IndexedMemory, RecordContext
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients


def open_store(state_dir: Path) -> PersistentMemory:
    """A store with the default settings (domain and task type ``general``) under ``state_dir``."""
    return PersistentMemory(
        PersistentMemoryConfig(enabled=True), state_dir, domain="general", task_type="general"
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PersistentMemory]:
    memory = open_store(tmp_path / "state")
    yield memory
    memory.close()
    close_clients()


def index_kept_in_the_folder(state_dir: Path) -> tuple[IndexedMemory, IndexedMemory]:
    """What an earlier version kept in the state folder beside a server's store: the Otter line from
    two agents (one memory, two sources) with a learned value of 0.8, the Falcon line marked stale
    ("moved"), and agent_b the winner of turn 1 of session ``s``; the two memories, Otter first."""
    local = open_store(state_dir)
    for agent, turn, text in (
        ("agent_a", 1, "Otter ridge opens at nine."),
        ("agent_b", 2, "Otter ridge opens at nine."),
        ("agent_b", 1, "Falcon harbour closes at six."),
    ):
        local.record([{"role": "user", "content": text}], RecordContext(agent, "s", turn))
    otter, falcon = sorted(local.list_memories(), key=lambda m: m.text, reverse=True)
    local.index.set_value(otter.id, "general", 0.8)
    local.index.mark_stale(StaleMark(falcon.id, "moved", "agent_a", session_id="s", turn=2))
    local.record_winner("s", 1, "agent_b")
    local.close()
    close_clients()
    return otter, falcon

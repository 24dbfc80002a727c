"""The long-term store the memory tests share: local Qdrant and the offline embedder under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
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

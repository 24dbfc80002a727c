"""mem0's ``Memory`` over the configured vector store, built on first use: the import is heavy, and
commands that read only the index never pay for it. The local folder's vector store opens without it:
an import's verbatim records are written there as mem0 writes them, and mem0 is built only for what
needs it (a record through ``add``, a delete, a write to finish)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.bulk import VerbatimRecord, add_verbatim, add_verbatim_locally
from massgen_cli.memory.longterm.store.embedder import Mem0EmbedderAdapter
from massgen_cli.memory.longterm.store.index.contract import StoreIndex
from massgen_cli.memory.longterm.store.journal import reconcile
from massgen_cli.memory.longterm.store.mem0_config import EmbedderPlan, MemoryLLMPlan, quiet_libraries
from massgen_cli.memory.longterm.store.point_texts import PointTexts
from massgen_cli.memory.longterm.store.vector_stores import (
    keeps_local_folder,
    local_vector_store,
    vector_store_config,
)


class Mem0Store:
    """Builds mem0 once per store, under a lock (recording threads may ask for it at the same time),
    and finishes the write journal of a process that died before anything else touches the points."""

    def __init__(
        self,
        settings: PersistentMemoryConfig,
        state_dir: Path,
        llm_plan: MemoryLLMPlan,
        embedder_plan: EmbedderPlan,
        index: StoreIndex,
    ):
        self.settings = settings
        self.state_dir = state_dir
        self.llm_plan = llm_plan
        self.embedder_plan = embedder_plan
        self.index = index
        self._memory: Any = None
        self._local: Any = None
        self._lock = threading.Lock()

    @property
    def memory(self) -> Any:
        """mem0's Memory, built on first use."""
        with self._lock:
            if self._memory is None:
                self._memory = self._build()
            return self._memory

    def open(self) -> None:
        """Open the vector store (the local folder alone, else mem0 over it), so that a problem with it
        (another process's lock, damage, a server that is down) shows now."""
        if keeps_local_folder(self.settings):
            self._local_store()
        else:
            self.memory  # noqa: B018

    def add_verbatim(self, records: list[VerbatimRecord]) -> list[str]:
        """``records`` stored as mem0's verbatim ``add`` stores each, in one write (``bulk``); their ids."""
        if keeps_local_folder(self.settings):
            return add_verbatim_locally(self._local_store(), self._history_file(), records)
        return add_verbatim(self.memory, records)

    def _local_store(self) -> Any:
        """The local folder's vector store; when a process that died left writes unfinished, mem0 is
        built first to finish them (``reconcile``)."""
        if self._local is None and self.index.pending():
            self.memory  # noqa: B018
        with self._lock:
            if self._local is None:
                self._local = local_vector_store(self.settings, self.state_dir, self.embedder_plan.dimensions)
            return self._local

    def _build(self) -> Any:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("MEM0_DIR", str(self.state_dir / "mem0"))
        quiet_libraries()
        from mem0 import Memory

        config = self._config()
        try:
            memory = Memory.from_config(config)
        except MemoryStoreError:
            raise
        except Exception as error:
            raise MemoryStoreError(f"could not open the memory store: {error}") from error
        if self.embedder_plan.local:
            # mem0 2.2.1 builds embedders only from its provider names (an in-process one needs
            # langchain); the offline embedder takes the place of the placeholder it built.
            memory.embedding_model = Mem0EmbedderAdapter()
        if keeps_local_folder(self.settings):
            # mem0 2.2.1 builds only its own stores; the local folder's take the place of the
            # placeholders it built (its entity collection beside the memories', as it names it).
            memory.vector_store = self._local or local_vector_store(
                self.settings, self.state_dir, self.embedder_plan.dimensions
            )
            self._local = memory.vector_store
            memory._entity_store = local_vector_store(
                self.settings, self.state_dir, self.embedder_plan.dimensions, "_entities"
            )
        memory.vector_store = PointTexts(memory.vector_store, self.index)
        if self.llm_plan.openai_itself:
            from massgen_cli.memory.longterm.store.mem0_llm import within_schema

            memory.llm = within_schema(memory.llm)
        reconcile(self.index, memory)
        return memory

    def _config(self) -> dict[str, Any]:
        return {
            "vector_store": vector_store_config(self.settings, self.state_dir, self.embedder_plan.dimensions),
            "embedder": self.embedder_plan.mem0_config,
            "llm": self.llm_plan.mem0_config,
            # Several processes share a pgvector store; mem0's own history file would make them wait on
            # each other's SQLite locks, and nothing here reads it.
            "history_db_path": ":memory:"
            if self.settings.keeps_truth_on_server
            else str(self._history_file()),
        }

    def _history_file(self) -> Path:
        return self.state_dir / "memory" / "history.db"

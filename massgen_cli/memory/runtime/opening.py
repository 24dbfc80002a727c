"""Opening a run's long-term memory: the store, the spool that keeps records while the store is off,
the background recorder, the value traces, and each agent's memory settings. A store that cannot open
is said once, and the run goes on without it. The other roles (recall, recording, the agents' memory
tools) read what is opened here, and where the run stands (``LongTermRun.at``)."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

from massgen_cli.attempts import AttemptAt
from massgen_cli.config.memory import MemoryConfig, persistent_enabled
from massgen_cli.config.schema import MassGenConfig, long_term_wanted
from massgen_cli.errors import MassGenError
from massgen_cli.events import Notice, NoticeLevel, RunEvent
from massgen_cli.memory.longterm.record.background import MemoryRecorder
from massgen_cli.memory.longterm.record.spool import SPOOL_NAME, Spool
from massgen_cli.memory.longterm.retrieve.values import EligibilityTraces
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import spool_target


def value_goal(memory: MemoryConfig) -> str:
    """The goal learned values belong to: ``value_learning.goal``, else the memory's task type."""
    return memory.value_learning.goal or memory.task_type


def searches_all_sessions(memory: MemoryConfig) -> bool:
    """``session_name: null``, written or left out (its default), means: search every session."""
    return memory.persistent_memory.session_name is None


def store_memory_config(config: MassGenConfig) -> MemoryConfig:
    """The memory block the process's store is opened with: the global one when it turns long-term
    memory on, else the first agent's that does."""
    enabled = [a.memory for a in config.agents if a.memory is not None and persistent_enabled(a.memory)]
    if persistent_enabled(config.memory) or not enabled:
        return config.memory
    return enabled[0]


class LongTermRun:
    """A run's long-term memory as opened (``store`` is None when it could not open, or nothing is kept),
    and the attempt the run is in."""

    def __init__(
        self,
        config: MassGenConfig,
        state_dir: Path | None,
        session_id: str,
        emit: Callable[[RunEvent], None],
        refiled: Mapping[int, int] | None = None,
    ):
        """``state_dir`` None: the state folder cannot be written, so nothing is stored or kept;
        ``refiled``: the session's turns the memory server has just numbered anew (old number to new),
        whose records in the spool are re-filed under the new numbers before anything writes them."""
        self.config = config
        self.session_id = session_id
        self.emit = emit
        self.settings: dict[str, MemoryConfig] = {
            a.id or "": a.memory or config.memory for a in config.agents
        }
        self.startup_errors: list[str] = []
        kept = state_dir if long_term_wanted(config) else None
        self.store = self._open_store(kept) if kept else None
        target = spool_target(self.store_settings(), kept) if kept else None
        self.spool = Spool(kept / "memory" / SPOOL_NAME, target, self.failed) if kept and target else None
        if self.spool is not None and refiled:
            self.spool.refile(session_id, refiled)
        self.recorder = MemoryRecorder(self.store, emit, self.spool) if self.store else None
        learning = config.memory.value_learning
        self.traces = EligibilityTraces(learning) if learning.enabled and self.store else None
        self.at = AttemptAt(0)
        self.dump_dir: Path | None = None

    def begin(self, at: AttemptAt) -> None:
        self.at = at
        self.dump_dir = at.log_dir / "memory_debug" if at.log_dir else None

    def enabled_for(self, agent_id: str) -> bool:
        return self.store is not None and persistent_enabled(self.settings.get(agent_id))

    def tools_for(self, agent_id: str) -> bool:
        """Whether the agent is given the memory tools: long-term memory on for it, and ``memory.tools``."""
        return self.enabled_for(agent_id) and self.settings[agent_id].tools

    def store_settings(self) -> MemoryConfig:
        return store_memory_config(self.config)

    def failed(self, message: str, error: BaseException | None = None) -> None:
        """A memory failure (from ``error``, when one was raised): shown, and kept for the turn's summary;
        while the memory server cannot be reached, shown once a run."""
        level: NoticeLevel = "warning"
        if self.recorder is not None:
            level, message = self.recorder.noticed(message, error)
            self.recorder.errors.append(message)
        self.emit(Notice(level, message))

    async def close(self) -> None:
        if self.recorder is not None:
            await self.recorder.close()
        if self.store is not None:
            self.store.close()

    def _open_store(self, state_dir: Path) -> PersistentMemory | None:
        """The process's store, opened now so a problem (another process's lock, a server that is
        down) shows before the first turn; the run goes on without long-term memory then."""
        memory = self.store_settings()
        try:
            store = PersistentMemory(
                memory.persistent_memory,
                state_dir,
                domain=memory.domain,
                task_type=memory.task_type,
                lifecycle=memory.lifecycle,
            )
            store.mem0  # noqa: B018 (builds mem0 and opens the vector store)
        except (MassGenError, OSError) as error:  # a known problem: a lock, a server, the disk, damage
            self._off(f"long-term memory is off for this run: {error}", state_dir)
            return None
        except Exception as error:  # a bug: said as one, but the run still goes on without the store
            self.emit(Notice("debug", traceback.format_exc()))
            self._off(
                f"long-term memory is off for this run because of an unexpected {type(error).__name__}: "
                f"{error} (a bug; please report it, --debug shows where)",
                state_dir,
            )
            return None
        if store.migration is not None:
            self.emit(
                Notice(
                    "info",
                    f"long-term memory: the state folder's index is on the server now: "
                    f"{store.migration.describe()}",
                )
            )
        plan = f"memory: LLM {store.llm_plan.reason}; embedder {store.embedder_plan.name}"
        self.emit(Notice("debug", plan))
        return store

    def _off(self, reason: str, state_dir: Path) -> None:
        """Said once, with where this run's records wait meanwhile."""
        spool = state_dir / "memory" / SPOOL_NAME
        message = (
            f"{reason.rstrip('. ')}. This run's memory records are kept in {spool} and written by the "
            "first run that opens the store again"
        )
        self.startup_errors.append(message)
        self.emit(Notice("degraded", message))

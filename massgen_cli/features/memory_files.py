"""Memory as files (``coordination.enable_memory_filesystem_mode``): before each step the system prompt
shows the agent's memory files (and, with snapshots, its peers' as of their latest answers); after each
decision the files it changed are recorded; the winner consolidates them when it presents the final
answer (``MemoryFiles`` is the attempt part that merges them at the end of a turn)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.coordination.extension import StepAt, StepDone, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.features.workspaces import agent_workspaces

if TYPE_CHECKING:
    from massgen_cli.memory.filesystem import MemoryFiles


class MemoryFilesMode(StepExtension):
    name: ClassVar[str] = "memory files"

    def __init__(self, files: MemoryFiles, peers_view: Callable[[str], Path] | None = None):
        """``peers_view``: where an agent finds its peers' snapshots (None without snapshots)."""
        self.files = files
        self.peers_view = peers_view

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        view = self.peers_view(at.agent_id) if self.peers_view is not None and with_peers else None
        return await asyncio.to_thread(self.files.section, at.agent_id, view)

    async def decided(self, done: StepDone) -> None:
        await self.files.index(done.at.agent_id)

    def presentation_note(self, agent_id: str) -> str:
        return self.files.consolidation(agent_id)


def _open(opening: Opening) -> Opened:
    """MassGen's filesystem memory mode; what it recorded is kept in the session's folder, and written to
    long-term memory when that is on."""
    from massgen_cli.memory.filesystem import LEDGER_FILE, FileLedger, MemoryFiles

    kept_in = opening.place.session_folder
    ledger = FileLedger(kept_in / LEDGER_FILE if kept_in is not None else None)
    long_term = opening.provided("long-term memory")
    recorder = long_term.extension.recording if long_term is not None else None
    config = opening.config
    files = MemoryFiles(agent_workspaces(config), config.agent_ids, opening.emit, recorder, ledger)
    snapshots = opening.provided("workspace snapshots")
    view = snapshots.view_folder if snapshots is not None else None
    return Opened(MemoryFilesMode(files, view), files)


FEATURE = Feature(
    "memory files",
    wanted=lambda opening: opening.config.orchestrator.coordination.enable_memory_filesystem_mode,
    open=_open,
    needs=("workspace snapshots", "long-term memory"),
    steps_after=("long-term memory",),
    commits_after=("task plans",),
)

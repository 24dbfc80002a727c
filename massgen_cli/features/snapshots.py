"""Workspace snapshots (``orchestrator.snapshot_storage``): an agent's workspace is kept as it is at each
new answer, and every agent reads its peers' latest, read-only, under their aliases (``Snapshots`` is the
attempt part)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import Notice, RunEvent
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.features.labels import agent_labels

if TYPE_CHECKING:
    from massgen_cli.tools.snapshots import Snapshots


class PeerSnapshots(StepExtension):
    name: ClassVar[str] = "workspace snapshots"

    def __init__(self, snapshots: Snapshots, emit: Callable[[RunEvent], None]):
        self.snapshots = snapshots
        self.emit = emit

    def readable(self, agent_id: str) -> Sequence[Path]:
        return [self.snapshots.view_folder(agent_id)]

    async def task_note(self, at: StepAt) -> str:
        """The agent's view of its peers' snapshots, rebuilt; the line that tells it where they are."""
        labels = await asyncio.to_thread(self.snapshots.refresh_view, at.agent_id)
        folder = self.snapshots.view_folder(at.agent_id)
        if not labels:
            return f"Your peers' workspaces will appear under {folder} (read-only) once they answer."
        listed = ", ".join(f"{folder / label}" for label in labels)
        return f"Your peers' workspaces as of their latest answers (read-only, by their labels): {listed}"

    async def answered(self, at: StepAt, content: str) -> None:
        """Keep the agent's workspace as it is now, for its peers; what cannot be kept is said, and the
        turn goes on (an agent's own folder is no reason to fail a run)."""
        if at.workspace is None:
            return
        try:
            left_out = await asyncio.to_thread(self.snapshots.take, at.agent_id, at.workspace)
        except OSError as error:
            self.emit(Notice("warning", f"[{at.agent_id}] its workspace was not kept for its peers: {error}"))
            return
        if left_out:
            shown = ", ".join(left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
            self.emit(Notice("warning", f"[{at.agent_id}] left out of its snapshot: {shown}"))


def _open(opening: Opening) -> Opened:
    """Snapshots under ``orchestrator.snapshot_storage``, each agent's view of its peers' beside them
    (``agent_temporary_workspace``); the memory files read the views."""
    from massgen_cli.tools.snapshots import Snapshots

    orchestrator, place = opening.config.orchestrator, opening.place
    storage = orchestrator.snapshot_storage or ""
    views = orchestrator.agent_temporary_workspace or f"{storage.rstrip('/')}_views"
    snapshots = Snapshots(Path(storage), Path(views), place.session.id, agent_labels(opening.config))
    return Opened(PeerSnapshots(snapshots, opening.emit), snapshots, provides=snapshots)


FEATURE = Feature(
    "workspace snapshots",
    wanted=lambda opening: opening.config.orchestrator.snapshot_storage is not None,
    open=_open,
    commits_after=("shared memory",),
)

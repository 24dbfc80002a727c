"""Task planning (``coordination.enable_agent_task_planning``): each agent gets the planning tools, and
before every step sees its own plan and its peers' (``PlanBook`` is the attempt part)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.blocks import TASK_PLANS
from massgen_cli.coordination.extension import BlockMarker, Equipment, StepAt, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.features.labels import agent_labels
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.tools.planning import PlanBook


class TaskPlanning(StepExtension):
    name: ClassVar[str] = "task plans"
    markers: ClassVar[tuple[BlockMarker, ...]] = (BlockMarker(TASK_PLANS),)

    def __init__(self, book: PlanBook):
        self.book = book

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        from massgen_cli.tools.planning import GUIDANCE

        return Equipment(self.book.tools(agent_id, workspace), GUIDANCE)

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        block = self.book.block(at.agent_id)
        return [block] if block is not None else []


def _open(opening: Opening) -> Opened:
    """Every agent's plan book, kept in the session's folder when the run keeps anything."""
    from massgen_cli.tools.planning import PlanBook, PlanSettings

    coordination = opening.config.orchestrator.coordination
    settings = PlanSettings(coordination.max_tasks_per_plan, coordination.task_planning_filesystem_mode)
    labels = agent_labels(opening.config)
    book = PlanBook(settings, labels, opening.emit, opening.place.session_folder)
    return Opened(TaskPlanning(book), book, provides=book)


FEATURE = Feature(
    "task plans",
    wanted=lambda opening: opening.config.orchestrator.coordination.enable_agent_task_planning,
    open=_open,
    steps_after=("skills",),
    commits_after=("workspace snapshots",),
)

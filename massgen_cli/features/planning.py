"""Task planning (``coordination.enable_agent_task_planning``): each agent gets the planning tools, and
before every step sees its own plan and its peers' (``PlanBook`` is the attempt part)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from massgen_cli.coordination.extension import BlockMarker, Equipment, StepAt, StepExtension
from massgen_cli.messages import Message
from massgen_cli.tools.planning import GUIDANCE, PLANS_HEADER, PlanBook


class TaskPlanning(StepExtension):
    name: ClassVar[str] = "task plans"
    markers: ClassVar[tuple[BlockMarker, ...]] = (BlockMarker(PLANS_HEADER),)

    def __init__(self, book: PlanBook):
        self.book = book

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        return Equipment(self.book.tools(agent_id, workspace), GUIDANCE)

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        block = self.book.block(at.agent_id)
        return [block] if block is not None else []

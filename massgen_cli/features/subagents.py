"""Subagents (``coordination.enable_subagents``, as MassGen turns them on): each agent gets
``spawn_subagents`` and, before every step, a block of its subagents (running, or done with their
answers and workspaces: kept when the agent restarts). On while the run may nest teams this deep
(``subagent_max_depth``); the pool is ``tools.subagents``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.blocks import SUBAGENTS
from massgen_cli.coordination.extension import BlockMarker, Equipment, StepAt, StepExtension
from massgen_cli.events import Notice
from massgen_cli.features.declaration import Feature, Opened, Opening, Place
from massgen_cli.messages import Message
from massgen_cli.text import one_line

if TYPE_CHECKING:
    from massgen_cli.tools.subagents import SubagentPool

ANSWER_CHARS = 1500


class Subagents(StepExtension):
    name: ClassVar[str] = "subagents"
    part_name: ClassVar[str] = "the subagents"
    markers: ClassVar[tuple[BlockMarker, ...]] = (BlockMarker(SUBAGENTS),)

    def __init__(self, pool: SubagentPool):
        self.pool = pool

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        from massgen_cli.tools.subagents import GUIDANCE

        return Equipment([self.pool.tool(agent_id, workspace)], GUIDANCE)

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        runs = self.pool.of(at.agent_id)
        if not runs:
            return []
        lines = []
        for run in runs:
            said = run.described()
            answer = one_line(str(said.get("answer") or said.get("error") or ""), ANSWER_CHARS)
            lines.append(f"- {run.subagent_id} [{said['status']}] task: {one_line(run.task, 200)}")
            lines.append(f"  workspace: {run.workspace}" + (f"\n  answer: {answer}" if answer else ""))
        return [BlockMarker(SUBAGENTS).block("\n".join(lines))]

    def begin(self, at: AttemptAt) -> None:
        """Nothing to begin: the pool starts runs as the tool asks."""

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        await self.pool.close()  # what still runs when the turn ends is cancelled (its work is not used)
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        if whole_turn:
            self.pool.cancel()


def _wanted(opening: Opening) -> bool:
    teams = opening.place.teams
    coordination = opening.config.orchestrator.coordination
    return (
        coordination.enable_subagents and teams is not None and teams.depth <= coordination.subagent_max_depth
    )


def _open(opening: Opening) -> Opened | None:
    from massgen_cli.tools.subagents import SubagentPool

    place, teams = opening.place, opening.place.teams
    if place.kept_in is None or teams is None:
        opening.emit(Notice("degraded", "subagents are off: the state folder cannot be written"))
        return None
    private = (*place.private, place.state_folder)
    folders, spent = _folders(place), opening.spending.reached
    pool = SubagentPool(opening.config, teams, opening.emit, folders, private, spent)
    subagents = Subagents(pool)
    return Opened(subagents, subagents, close=pool.close)


def _folders(place: Place) -> Callable[[str, Path | None], Path]:
    """Where an agent's subagents live: in its workspace (it reads their work there), else in the state
    folder."""

    def folder_of(agent_id: str, workspace: Path | None) -> Path:
        if workspace is not None:
            return workspace / "subagents"
        return place.state_folder / "subagents" / place.session.id / agent_id

    return folder_of


FEATURE = Feature("subagents", wanted=_wanted, open=_open, steps_after=("task plans",))

"""The keys of ``orchestrator.coordination`` that shape how agents plan, how fast they iterate and what
they judge answers against: MassGen's plan keys (``--plan``, ``--plan-and-execute``), its ``--fast``
preset's knobs and its inline evaluation criteria (``--eval-criteria``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import NonNegativeInt, field_validator

from massgen_cli.config.base import AtLeastOne, Section
from massgen_cli.config.deferred import deferred

if TYPE_CHECKING:
    from massgen_cli.config.criteria import Criterion
else:
    Criterion = deferred("massgen_cli.config.criteria", "Criterion")

PlanDepth = Literal["dynamic", "shallow", "medium", "deep"]
PlanMode = Literal["plan", "plan_and_execute"]


class QualitySettings(Section):
    """Planning, fast iteration and evaluation criteria (see the module docstring)."""

    plan_mode: PlanMode | None = None
    """This project's switch of MassGen's --plan and --plan-and-execute: 'plan' makes each turn a planning
    turn (the agents' answers are task plans; the chosen one is kept under <state>/plans/);
    'plan_and_execute' then runs the plan, one turn per chunk, with the planning tools on and each agent's
    plan seeded with the chunk's tasks. Null: answer as usual.
    """
    plan_depth: PlanDepth = "dynamic"
    """How fine the plan is: dynamic (as the task needs), shallow (5-10 tasks), medium (20-50), deep (100-200
    and more).
    """
    plan_target_steps: AtLeastOne | None = None
    """About how many tasks the plan should have; null: by depth."""
    plan_target_chunks: AtLeastOne | None = None
    """How many chunks (ordered groups of tasks, each executed in its own turn) the plan should have; null:
    one, as MassGen's plan mode.
    """
    fast_iteration_mode: bool = False
    """Agents submit a working answer and leave polish to the next round (--fast sets it); with evaluation
    criteria they weigh real gaps over polish.
    """
    max_verifications_per_round: NonNegativeInt | None = None
    """Checks of a candidate an agent makes in one step (--fast: 1)."""
    max_internal_fix_loops: NonNegativeInt | None = None
    """Verify-and-fix loops in one step (--fast: 0)."""
    skip_redundant_scaffolding: bool = False
    """Agents reuse the notes and plans already in their workspace instead of writing them again (--fast sets
    it).
    """
    checklist_criteria_inline: list[Criterion] | None = None
    """Evaluation criteria the agents judge answers against (--eval-criteria FILE sets them): shown to every
    agent as E1..EN; a vote comes with submit_checklist, a verdict on each, and a vote for an answer that
    fails a primary or standard criterion is refused once in that step with the failing criteria named.
    """

    @field_validator("checklist_criteria_inline")
    @classmethod
    def _some_criteria(cls, criteria: list[Criterion] | None) -> list[Criterion] | None:
        if criteria is not None and not criteria:
            raise ValueError("give at least one criterion, or leave the key out")
        return criteria

    @property
    def fast_knobs_on(self) -> bool:
        """Whether any of the --fast preset's knobs is set."""
        return (
            self.fast_iteration_mode
            or self.max_verifications_per_round is not None
            or self.max_internal_fix_loops is not None
            or self.skip_redundant_scaffolding
        )


FAST_PRESET: dict[str, Any] = {
    "fast_iteration_mode": True,
    "max_verifications_per_round": 1,
    "max_internal_fix_loops": 0,
    "skip_redundant_scaffolding": True,
}
"""MassGen's --fast preset: set where the config does not set the key itself (its values win)."""

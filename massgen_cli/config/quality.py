"""The keys of ``orchestrator.coordination`` that shape how agents plan, how fast they iterate and what
they judge answers against: MassGen's plan keys (``--plan``, ``--plan-and-execute``), its ``--fast``
preset's knobs and its inline evaluation criteria (``--eval-criteria``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator, model_validator

from massgen_cli.config.base import Section
from massgen_cli.config.problems import describe_error
from massgen_cli.errors import ConfigError

PlanDepth = Literal["dynamic", "shallow", "medium", "deep"]
PlanMode = Literal["plan", "plan_and_execute"]
CriterionCategory = Literal["primary", "standard", "stretch"]
LEGACY_CATEGORIES = {"must": "standard", "core": "standard", "could": "stretch"}
"""MassGen's older category names, read as it reads them."""


class Criterion(Section):
    """One evaluation criterion, as MassGen's criteria files write it: ``text`` (or ``description`` or
    ``name``), its category, and optionally how to verify it and what fails it."""

    text: str = Field(min_length=1, description="What an answer must do.")
    category: CriterionCategory = Field(
        default="standard",
        description="'primary' and 'standard' must hold for a vote to stand; 'stretch' may fail "
        "(MassGen's 'must'/'core' read as standard, 'could' as stretch).",
    )
    verify_by: str | None = Field(default=None, description="How to check it.")
    anti_patterns: list[str] = Field(default_factory=list, description="What fails it.")
    score_anchors: dict[str, str] = Field(
        default_factory=dict, description="MassGen's score anchors; shown with the criterion."
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        """``description`` or ``name`` as ``text``; a legacy category as MassGen maps it."""
        if not isinstance(data, dict):
            return {"text": data} if isinstance(data, str) else data
        data = dict(data)
        for alias in ("description", "name"):
            if alias in data:
                value = data.pop(alias)
                data.setdefault("text", value)
        category = data.get("category")
        if isinstance(category, str):
            lowered = category.strip().lower()
            data["category"] = LEGACY_CATEGORIES.get(lowered, lowered)
        return data


class QualitySettings(Section):
    """Planning, fast iteration and evaluation criteria (see the module docstring)."""

    plan_mode: PlanMode | None = Field(
        default=None,
        description="This project's switch of MassGen's --plan and --plan-and-execute: 'plan' makes each "
        "turn a planning turn (the agents' answers are task plans; the chosen one is kept under "
        "<state>/plans/); 'plan_and_execute' then runs the plan, one turn per chunk, with the planning "
        "tools on and each agent's plan seeded with the chunk's tasks. Null: answer as usual.",
    )
    plan_depth: PlanDepth = Field(
        default="dynamic",
        description="How fine the plan is: dynamic (as the task needs), shallow (5-10 tasks), medium "
        "(20-50), deep (100-200 and more).",
    )
    plan_target_steps: int | None = Field(
        default=None, ge=1, description="About how many tasks the plan should have; null: by depth."
    )
    plan_target_chunks: int | None = Field(
        default=None,
        ge=1,
        description="How many chunks (ordered groups of tasks, each executed in its own turn) the plan "
        "should have; null: one, as MassGen's plan mode.",
    )
    fast_iteration_mode: bool = Field(
        default=False,
        description="Agents submit a working answer and leave polish to the next round (--fast sets it); "
        "with evaluation criteria they weigh real gaps over polish.",
    )
    max_verifications_per_round: int | None = Field(
        default=None, ge=0, description="Checks of a candidate an agent makes in one step (--fast: 1)."
    )
    max_internal_fix_loops: int | None = Field(
        default=None, ge=0, description="Verify-and-fix loops in one step (--fast: 0)."
    )
    skip_redundant_scaffolding: bool = Field(
        default=False,
        description="Agents reuse the notes and plans already in their workspace instead of writing them "
        "again (--fast sets it).",
    )
    checklist_criteria_inline: list[Criterion] | None = Field(
        default=None,
        description="Evaluation criteria the agents judge answers against (--eval-criteria FILE sets "
        "them): shown to every agent as E1..EN; a vote comes with submit_checklist, a verdict on each, "
        "and a vote for an answer that fails a primary or standard criterion is refused once in that "
        "step with the failing criteria named.",
    )

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


def criteria_file(path: Path) -> list[Criterion]:
    """The evaluation criteria of a JSON file, as MassGen's ``--eval-criteria`` reads it: a list of
    criteria, or ``{"criteria": [...]}``; a ``ConfigError`` naming the file and the item when it is not."""
    where = f"--eval-criteria {path}"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        raise ConfigError(f"{where}: not valid JSON ({error})") from None
    if isinstance(document, dict) and "criteria" in document:
        document = document["criteria"]
    if not isinstance(document, list) or not document:
        raise ConfigError(f'{where}: give a non-empty JSON list of criteria, or {{"criteria": [...]}}')
    try:
        return TypeAdapter(list[Criterion]).validate_python(document)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            number, *field = problem["loc"]
            key = f" {field[0]}" if field else ""
            problems.append(f"{where}: item {int(number) + 1}{key}: {describe_error(problem)}")
        raise ConfigError(problems) from None

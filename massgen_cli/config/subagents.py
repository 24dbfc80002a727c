"""The subagent keys of ``orchestrator.coordination`` (MassGen's ``enable_subagents`` and its bounds, and
``subagent_orchestrator``: the team a subagent runs), and this project's depth and cost bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, PositiveFloat

from massgen_cli.config.base import AtLeastOne, Section
from massgen_cli.config.deferred import deferred

if TYPE_CHECKING:
    from massgen_cli.config.subagent_team import SubagentTeamConfig
else:
    SubagentTeamConfig = deferred("massgen_cli.config.subagent_team", "SubagentTeamConfig")


class SubagentSettings(Section):
    """The subagent keys of ``orchestrator.coordination``."""

    enable_subagents: bool = False
    """Agents get the spawn_subagents tool: it hands subtasks to small teams of their own, each run in its own
    workspace folder, within the bounds below; its result is the teams' answers.
    """
    subagent_default_timeout: PositiveFloat = 300.0
    """Seconds a subagent's run may take, unless the call asks for less."""
    subagent_min_timeout: PositiveFloat = 60.0
    """The least time a subagent is given."""
    subagent_max_timeout: PositiveFloat = 600.0
    """The most time a subagent is given."""
    subagent_max_concurrent: AtLeastOne = 3
    """Most subagents one spawn_subagents call starts (they run at once)."""
    subagent_max_depth: AtLeastOne = 1
    """How deep subagents nest: 1 (as MassGen) lets the user's agents spawn subagents and no subagent spawn
    its own; 2 lets those spawn once more.
    """
    subagent_max_cost_usd: PositiveFloat | None = Field(default=1.0, allow_inf_nan=False)
    """Most one subagent's run may spend, in USD (its team stops with the best answer so far, as
    orchestrator.max_cost_usd does); null: no cap.
    """
    subagent_orchestrator: SubagentTeamConfig | None = None
    """The team each subagent runs (MassGen's subagent_orchestrator)."""

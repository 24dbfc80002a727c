"""The subagent keys of ``orchestrator.coordination`` (MassGen's ``enable_subagents`` and its bounds, and
``subagent_orchestrator``: the team a subagent runs), and this project's depth and cost bounds."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from massgen_cli.config.base import Section


class SubagentTeamConfig(Section):
    """``subagent_orchestrator:``: the team every subagent runs, as MassGen writes it."""

    enabled: bool = Field(
        default=False,
        description="MassGen's switch of a multi-agent child team; its agents are used either way.",
    )
    agents: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The agents of each subagent's team (id, backend, as under agents:), before the spawning "
        "agent's own subagent_agents; with none, the team is a copy of the spawning agent.",
    )
    coordination: dict[str, Any] = Field(
        default_factory=dict, description="Keys of orchestrator.coordination for the subagents' runs."
    )
    max_new_answers: int = Field(
        default=3, ge=1, description="Most new answers per agent of a subagent's team (MassGen's default 3)."
    )
    final_answer_strategy: Literal["winner_reuse", "winner_present", "synthesize"] | None = Field(
        default=None, description="The subagents' final answer, as orchestrator.final_answer_strategy."
    )
    disable_injection: bool = Field(
        default=True, description="As orchestrator.disable_injection, for the team."
    )
    defer_voting_until_all_answered: bool = Field(
        default=True, description="As orchestrator.defer_voting_until_all_answered, for the team."
    )
    inherit_spawning_agent_backend: bool = Field(
        default=False,
        description="MassGen's: a team made from the spawning agent's backend (what happens here when no "
        "agents are given).",
    )
    enable_web_search: bool | None = Field(
        default=None, description="The team's agents use their provider's web search (null: as configured)."
    )
    shared_child_team_types: list[str] = Field(
        default_factory=list,
        description="MassGen's subagent types that share this team (types are not built here).",
    )
    parse_at_references: bool = Field(
        default=False,
        description="MassGen's @path parsing of subagent tasks (never done here: tasks are text).",
    )


class SubagentSettings(Section):
    """The subagent keys of ``orchestrator.coordination``."""

    enable_subagents: bool = Field(
        default=False,
        description="Agents get the spawn_subagents tool: it hands subtasks to small teams of their own, each"
        " run in its own workspace folder, within the bounds below; its result is the teams' answers.",
    )
    subagent_default_timeout: float = Field(
        default=300.0, gt=0, description="Seconds a subagent's run may take, unless the call asks for less."
    )
    subagent_min_timeout: float = Field(default=60.0, gt=0, description="The least time a subagent is given.")
    subagent_max_timeout: float = Field(default=600.0, gt=0, description="The most time a subagent is given.")
    subagent_max_concurrent: int = Field(
        default=3, ge=1, description="Most subagents one spawn_subagents call starts (they run at once)."
    )
    subagent_max_depth: int = Field(
        default=1,
        ge=1,
        description="How deep subagents nest: 1 (as MassGen) lets the user's agents spawn subagents and no "
        "subagent spawn its own; 2 lets those spawn once more.",
    )
    subagent_max_cost_usd: float | None = Field(
        default=1.0,
        gt=0,
        allow_inf_nan=False,
        description="Most one subagent's run may spend, in USD (its team stops with the best answer so far, "
        "as orchestrator.max_cost_usd does); null: no cap.",
    )
    subagent_orchestrator: SubagentTeamConfig | None = Field(
        default=None, description="The team each subagent runs (MassGen's subagent_orchestrator)."
    )

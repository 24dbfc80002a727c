"""``subagent_orchestrator:`` of ``orchestrator.coordination``: the team every subagent runs, as MassGen
writes it (a model of its own: built only when a config has one)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from massgen_cli.config.base import AtLeastOne, Section


class SubagentTeamConfig(Section):
    """``subagent_orchestrator:``: the team every subagent runs, as MassGen writes it."""

    enabled: bool = False
    """MassGen's switch of a multi-agent child team; its agents are used either way."""
    agents: list[dict[str, Any]] = Field(default_factory=list)
    """The agents of each subagent's team (id, backend, as under agents:), before the spawning agent's own
    subagent_agents; with none, the team is a copy of the spawning agent.
    """
    coordination: dict[str, Any] = Field(default_factory=dict)
    """Keys of orchestrator.coordination for the subagents' runs."""
    max_new_answers: AtLeastOne = 3
    """Most new answers per agent of a subagent's team (MassGen's default 3)."""
    final_answer_strategy: Literal["winner_reuse", "winner_present", "synthesize"] | None = None
    """The subagents' final answer, as orchestrator.final_answer_strategy."""
    disable_injection: bool = True
    """As orchestrator.disable_injection, for the team."""
    defer_voting_until_all_answered: bool = True
    """As orchestrator.defer_voting_until_all_answered, for the team."""
    inherit_spawning_agent_backend: bool = False
    """MassGen's: a team made from the spawning agent's backend (what happens here when no agents are given).
    """
    enable_web_search: bool | None = None
    """The team's agents use their provider's web search (null: as configured)."""
    shared_child_team_types: list[str] = Field(default_factory=list)
    """MassGen's subagent types that share this team (types are not built here)."""
    parse_at_references: bool = False
    """MassGen's @path parsing of subagent tasks (never done here: tasks are text)."""

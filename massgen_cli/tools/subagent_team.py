"""The config of a subagent's team, built from the run's: its agents (``subagent_orchestrator.agents``,
then the spawning agent's ``subagent_agents``, else a copy of the spawning agent), each working in the
subagent's workspace; the run's subagent bounds and hooks carried down; its time and cost bounds."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from massgen_cli.config.schema import AgentConfig, MassGenConfig

CARRIED = ("enable_subagents", "subagent_max_depth", "subagent_max_concurrent", "subagent_orchestrator")
"""The coordination keys a subagent's team keeps from the run (a nested team may spawn in turn, as deep
as the depth bound lets it)."""


def team_document(config: MassGenConfig, agent_id: str, workspace: Path, timeout_s: float) -> dict[str, Any]:
    """The config document of the team a subagent of ``agent_id`` runs, working in ``workspace``."""
    coordination = config.orchestrator.coordination
    team = coordination.subagent_orchestrator
    spawning = next(agent for agent in config.agents if agent.id == agent_id)
    given = [*(team.agents if team is not None else []), *spawning.subagent_agents]
    agents = [copy.deepcopy(agent) for agent in given] or [_copy_of(spawning)]
    for index, agent in enumerate(agents):
        agent["id"] = str(agent.get("id") or f"{agent_id}_sub{index + 1}")
        backend = agent.setdefault("backend", {})
        backend["cwd"] = str(workspace if len(agents) == 1 else workspace / agent["id"])
        if team is not None and team.enable_web_search is not None:
            backend["enable_web_search"] = team.enable_web_search
    carried = coordination.model_dump(mode="json", include=set(CARRIED), exclude_unset=True)
    orchestrator: dict[str, Any] = {
        "coordination": {**carried, **(team.coordination if team is not None else {})},
        "max_cost_usd": coordination.subagent_max_cost_usd,
    }
    if team is not None and len(agents) > 1:
        orchestrator.update(
            max_new_answers_per_agent=team.max_new_answers,
            final_answer_strategy=team.final_answer_strategy,
            disable_injection=team.disable_injection,
            defer_voting_until_all_answered=team.defer_voting_until_all_answered,
        )
    document: dict[str, Any] = {
        "agents": agents,
        "orchestrator": orchestrator,
        "timeout_settings": {"orchestrator_timeout_seconds": timeout_s},
        "ui": {"display_type": "silent", "logging_enabled": config.ui.logging_enabled},
    }
    if config.hooks is not None:  # a hook that guards the run's tools guards its subagents' too
        document["hooks"] = config.hooks.model_dump(mode="json", exclude_unset=True)
    return document


def _copy_of(agent: AgentConfig) -> dict[str, Any]:
    """The spawning agent as the one agent of its subagent's team (MassGen's inherited backend)."""
    dumped = agent.model_dump(mode="json", exclude_unset=True, exclude={"subagent_agents"})
    dumped["id"] = f"{agent.id}_sub"
    return dumped

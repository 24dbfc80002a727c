"""MassGen's mode flags on the question command: ``--single-agent [ID]`` runs one agent of the config (the
first when no id is given), ``--quick`` asks for one answer per agent with no refinement (one agent: its
answer is the final answer; several: they answer on their own, vote once all have answered, and the
winner presents a synthesis of every answer), ``--personas MODE`` turns the persona generator on with
that diversity mode (``off``: off), ``--otel`` (MassGen's ``--logfire``) turns the run's traces on,
``--fast`` sets MassGen's fast preset where the config does not set its keys, ``--plan`` and
``--plan-and-execute`` turn plan mode on, ``--eval-criteria FILE`` gives the criteria votes are judged
against. They change the loaded config, as the config's own keys would."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from massgen_cli.errors import UsageError

if TYPE_CHECKING:
    from massgen_cli.config.schema import AgentConfig, MassGenConfig

FIRST_AGENT = ""
"""``--single-agent`` given without an id: the config's first agent."""


@dataclass(frozen=True)
class ModeFlags:
    single_agent: str | None = None
    quick: bool = False
    personas: str | None = None
    """``--personas MODE``: the persona generator on with that diversity mode; ``off``: off."""
    telemetry: bool = False
    fast: bool = False
    plan: bool = False
    plan_and_execute: bool = False
    eval_criteria: Path | None = None

    def apply(self, config: MassGenConfig) -> None:
        self._apply_quality(config)
        if self.telemetry:
            config.telemetry.enabled = True
        if self.personas is not None:
            generator = config.orchestrator.coordination.persona_generator
            generator.enabled = self.personas != "off"
            if self.personas != "off":
                generator.diversity_mode = self.personas  # type: ignore[assignment]
        if self.single_agent is not None:
            config.agents = [_chosen(config, self.single_agent)]
        if self.quick:
            orchestrator = config.orchestrator
            orchestrator.max_new_answers_per_agent = 1
            orchestrator.skip_final_presentation = True
            if len(config.agents) > 1:
                orchestrator.disable_injection = True
                orchestrator.defer_voting_until_all_answered = True
                orchestrator.final_answer_strategy = "synthesize"

    def _apply_quality(self, config: MassGenConfig) -> None:
        """``--fast``, ``--plan``, ``--plan-and-execute`` and ``--eval-criteria``."""
        from massgen_cli.config.quality import FAST_PRESET

        coordination = config.orchestrator.coordination
        if self.fast:
            for key, value in FAST_PRESET.items():
                if key not in coordination.model_fields_set:  # the config's own values win, as in MassGen
                    setattr(coordination, key, value)
        if self.eval_criteria is not None:
            from massgen_cli.config.criteria import criteria_file

            coordination.checklist_criteria_inline = criteria_file(self.eval_criteria)
        if self.plan_and_execute:
            coordination.plan_mode = "plan_and_execute"
            coordination.enable_agent_task_planning = True
        elif self.plan:
            coordination.plan_mode = "plan"


def _chosen(config: MassGenConfig, agent_id: str) -> AgentConfig:
    if agent_id == FIRST_AGENT:
        return config.agents[0]
    for agent in config.agents:
        if agent.id == agent_id:
            return agent
    raise UsageError(
        f"--single-agent {agent_id}: the config has no such agent ({', '.join(config.agent_ids)})"
    )


def single_agent_argv(args: list[str]) -> list[str]:
    """``--single-agent`` written without an id (last, or before another option) as the first agent's
    flag: ``--single-agent=`` (an id may follow it as ``--single-agent ID``)."""
    fixed = list(args)
    for at, token in enumerate(fixed):
        if token == "--":
            break
        if token == "--single-agent" and (at + 1 == len(fixed) or fixed[at + 1].startswith("-")):
            fixed[at] = f"--single-agent={FIRST_AGENT}"
    return fixed

"""The coordination policy: every rule of how agents coordinate, read once from the config into one frozen
object that the turn, the orchestrator, each step, its watch and the final answer read. The config keeps
MassGen's names and aliases; the policy holds what they mean here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from massgen_cli.config.orchestrator import (
    OrchestratorConfig,
    PeerUpdates,
    TimeoutSettings,
    VotingSensitivity,
)
from massgen_cli.config.schema import MassGenConfig

Novelty = Literal["lenient", "balanced", "strict"]
FinalAnswerMode = Literal["reuse", "reuse_unless_writing", "present", "synthesize"]


@dataclass(frozen=True)
class AnswerRules:
    """How many new answers an agent (``per_agent``) and the attempt (``total``) may give, how new each
    must be, and MassGen's fairness cap: no agent more than ``lead_cap`` answers ahead of the slowest
    active peer; with ``defer_voting`` an agent at its cap waits for every agent's first answer."""

    per_agent: int | None = None
    total: int | None = None
    novelty: Novelty = "lenient"
    fairness: bool = False
    lead_cap: int = 2
    defer_voting: bool = False


@dataclass(frozen=True)
class Timing:
    """Timeouts in seconds: the whole attempt, one step, and MassGen's round timeouts (a wrap-up notice
    past ``initial_round_s`` or ``subsequent_round_s``, tools refused ``grace_s`` later)."""

    attempt_s: float = 1800.0
    step_s: float = 300.0
    initial_round_s: float | None = None
    subsequent_round_s: float | None = None
    grace_s: float = 120.0

    @property
    def own_answer_s(self) -> float:
        """How long an agent's own answer (one agent, or by agreement) may take."""
        return min(self.step_s, self.attempt_s)


@dataclass(frozen=True)
class CoordinationPolicy:
    """How a turn coordinates (see the module docstring)."""

    decide_by: Literal["votes", "agreement"] = "votes"
    restarts: int = 0
    max_steps_per_agent: int = 10
    max_reasks: int = 2
    tool_calls_per_step: int = 20
    peer_updates: PeerUpdates = "restart"
    injection_cap: int | None = None
    voting: VotingSensitivity | None = None
    voting_threshold: int | None = None
    final_answer: FinalAnswerMode = "present"
    answers: AnswerRules = field(default_factory=AnswerRules)
    timing: Timing = field(default_factory=Timing)

    @classmethod
    def of(cls, config: MassGenConfig) -> CoordinationPolicy:
        return cls.from_settings(config.orchestrator, config.timeout_settings)

    @classmethod
    def from_settings(
        cls, settings: OrchestratorConfig, timeouts: TimeoutSettings | None = None
    ) -> CoordinationPolicy:
        timeouts = timeouts or TimeoutSettings()
        return cls(
            decide_by=settings.decide_by,
            restarts=settings.restarts,
            max_steps_per_agent=settings.max_steps_per_agent,
            max_reasks=settings.max_reasks,
            tool_calls_per_step=settings.max_tool_calls_per_step,
            peer_updates=settings.peer_update_mode,
            injection_cap=settings.max_midstream_injections_per_round,
            voting=settings.voting_sensitivity,
            voting_threshold=settings.voting_threshold,
            final_answer=settings.final_answer_mode,
            answers=AnswerRules(
                settings.max_new_answers_per_agent,
                settings.max_new_answers_global,
                settings.answer_novelty_requirement,
                settings.fairness_enabled,
                settings.fairness_lead_cap_answers,
                settings.defer_voting_until_all_answered,
            ),
            timing=Timing(
                timeouts.orchestrator_timeout_seconds,
                settings.step_timeout_seconds,
                timeouts.initial_round_timeout_seconds,
                timeouts.subsequent_round_timeout_seconds,
                timeouts.round_timeout_grace_seconds,
            ),
        )

"""``orchestrator:`` and ``timeout_settings:``: how the agents coordinate, share memory, and how long a
turn may take."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from massgen_cli.config.base import Section
from massgen_cli.config.tools import ContextPath


class CoordinationConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            "enable_planning_mode",
            "planning_mode_instruction",
            "enable_agent_task_planning",
            "max_tasks_per_plan",
            "task_planning_filesystem_mode",
            "enable_memory_filesystem_mode",
            "use_skills",
            "massgen_skills",
            "skills_directory",
            "plan_depth",
            "broadcast",
            "broadcast_sensitivity",
            "response_depth",
            "broadcast_timeout",
            "broadcast_wait_by_default",
            "max_broadcasts_per_agent",
            "compression_target_ratio",
            "load_previous_session_skills",
            "persona_generator",
            "enable_subagents",
            "subagent_default_timeout",
            "subagent_min_timeout",
            "subagent_max_timeout",
            "subagent_max_concurrent",
            "subagent_round_timeouts",
            "subagent_orchestrator",
            "async_subagents",
            "use_two_tier_workspace",
            "write_mode",
        }
    )

    max_orchestration_restarts: int = Field(
        default=0,
        ge=0,
        le=10,
        description="Restarts after post-evaluation per turn; each restart is a new attempt.",
    )


class SharedMemoryConfig(Section):
    conversation: bool = Field(
        default=False, description="Share the agents' answers and votes (=== SHARED CONVERSATION MEMORY ===)."
    )
    persistent: bool = Field(
        default=False,
        description="Share long-term memories across agents (=== SHARED PERSISTENT MEMORY ===).",
    )
    window: int = Field(default=10, gt=0, description="Shared conversation entries shown: the last N.")
    entries: bool = Field(
        default=False, description="Share scoped entries (scope round or conversation) between agents."
    )
    token_budget: int = Field(
        default=2000, gt=0, description="Most tokens the shared memory block may add to a request."
    )


class OrchestratorConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            "session_storage",
            "dspy",
            "voting_sensitivity",
            "answer_novelty_requirement",
            "skip_coordination_rounds",
            "debug_final_answer",
            "timeout",
            "voting_threshold",
            "max_new_answers_global",
            "coordination_mode",
            "presenter_agent",
            "novelty_injection",
        }
    )

    max_new_answers_per_agent: int | None = Field(
        default=None,
        ge=1,
        description="Most new answers one agent may submit in an attempt; null means no limit.",
    )
    max_steps_per_agent: int = Field(
        default=8,
        ge=1,
        description="Most steps (backend calls) one agent may take in an attempt; a step cancelled by a "
        "peer's new answer does not count.",
    )
    step_timeout_seconds: float = Field(
        default=300.0, gt=0, description="Seconds one step may take before it is cancelled."
    )
    max_tool_calls_per_step: int = Field(
        default=30,
        ge=1,
        description="Most tool calls in one step; past it the tools are withdrawn and the agent must decide.",
    )
    tool_call_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Seconds one tool call may take; then it is stopped and reported."
    )
    context_paths: list[ContextPath] = Field(
        default_factory=list,
        description="Folders or files every agent may use through the file tools ({path, permission}); "
        "'write' applies to the final presentation only.",
    )
    snapshot_storage: str | None = Field(
        default=None,
        description="Folder for workspace snapshots: an agent's workspace is copied there when it answers, "
        "and its peers read it (relative to the current directory).",
    )
    agent_temporary_workspace: str | None = Field(
        default=None,
        description="Folder of each agent's read-only view of its peers' snapshots; null: "
        "<snapshot_storage>_views.",
    )
    max_reasks: int = Field(
        default=1, ge=0, description="Times an agent is asked again when its reply neither answers nor votes."
    )
    decide_by: Literal["votes", "agreement"] = Field(
        default="votes",
        description="'votes': agents see each other's answers, refine or vote; 'agreement': each agent "
        "answers once on its own and the answer the others agree with most wins (for small models whose "
        "votes are no better than chance, as in the embedded default).",
    )
    final_presentation: Literal["present", "reuse"] = Field(
        default="present",
        description="'present': the winner writes the final answer in one more call; 'reuse': no extra call.",
    )
    coordination: CoordinationConfig = Field(
        default_factory=CoordinationConfig, description="Coordination settings."
    )
    shared_memory: SharedMemoryConfig = Field(
        default_factory=SharedMemoryConfig,
        description="Memory shared across agents, injected after the first system message.",
    )


class TimeoutSettings(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {"initial_round_timeout_seconds", "subsequent_round_timeout_seconds", "round_timeout_grace_seconds"}
    )

    orchestrator_timeout_seconds: float = Field(
        default=1800.0, gt=0, description="Seconds the coordination of one turn may take in all."
    )

"""Pydantic models of a MassGen-style YAML config (agents, backend, orchestrator, timeouts, ui)."""

from __future__ import annotations

import string
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from massgen_cli.backends.providers import PROVIDERS, UNSUPPORTED_TYPES, infer_backend_type
from massgen_cli.config.base import Section
from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.problems import suggest

FAULTS = (429, 500, "timeout", "context_length")


class ScriptEntry(Section):
    """One scripted response: text, a tool call, a delay, or an injected fault."""

    text: str | None = None
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    delay: float = Field(default=0.0, ge=0)
    error: Literal[429, 500, "timeout", "context_length"] | None = None
    reasoning: str | None = None


class BackendConfig(Section):
    """``backend:`` of one agent. ``type`` is inferred from ``model`` when omitted."""

    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            # filesystem, workspace, MCP and built-in tools
            "cwd", "context_paths", "context_write_access_enabled", "enforce_read_before_delete",
            "exclude_file_operation_mcps", "mcp_servers", "direct_mcp_servers", "allowed_tools",
            "disallowed_tools", "exclude_tools", "custom_tools", "custom_tools_path", "auto_discover_custom_tools",
            "exclude_custom_tools", "enable_code_based_tools", "shared_tools_directory", "hooks",
            "concurrent_tool_execution", "max_concurrent_tools", "enable_web_search", "enable_code_interpreter",
            "enable_code_execution", "enable_image_generation", "enable_audio_generation",
            "enable_video_generation", "enable_file_generation", "enable_multimodal_tools", "multimodal_config",
            # command-line execution and Docker
            "enable_mcp_command_line", "command_line_allowed_commands", "command_line_blocked_commands",
            "command_line_execution_mode", "command_line_docker_image", "command_line_docker_memory_limit",
            "command_line_docker_cpu_limit", "command_line_docker_network_mode", "command_line_docker_enable_sudo",
            "command_line_docker_credentials", "command_line_docker_packages", "enable_docker_isolation",
            "docker_image", "docker_network_mode", "docker_memory_limit", "docker_cpu_limit",
            # provider-specific options
            "text", "reasoning", "permission_mode", "system_prompt", "append_system_prompt", "max_thinking_tokens",
            "max_turns", "api_version", "deployment_name", "safety_settings", "port", "separate_reasoning",
            "agent_config", "group_config", "enable_rate_limit", "enable_planning_mode",
        }
    )

    type: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    request_timeout_seconds: float = Field(
        default=120.0, gt=0, validation_alias=AliasChoices("request_timeout_seconds", "timeout")
    )
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_base_delay_seconds: float = Field(default=1.0, ge=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    top_k: int | None = Field(default=None, gt=0)
    repetition_penalty: float | None = Field(default=None, gt=0)
    chat_template_kwargs: dict[str, Any] | None = None
    responses: list[ScriptEntry] = Field(default_factory=list)

    @field_validator("responses", mode="before")
    @classmethod
    def _text_entries(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _resolve_type(self) -> BackendConfig:
        if self.type is None:
            if self.model is None:
                raise ValueError("set 'type' or 'model' so the backend can be chosen")
            inferred = infer_backend_type(self.model)
            if inferred is None:
                raise ValueError(f"cannot tell the backend type from model '{self.model}'; set 'type'")
            self.type = inferred
        if self.type in UNSUPPORTED_TYPES:
            raise ValueError(f"backend '{self.type}' is not supported yet: {UNSUPPORTED_TYPES[self.type]}")
        if self.type not in PROVIDERS:
            raise ValueError(f"unknown backend '{self.type}'{suggest(self.type, PROVIDERS)}")
        if self.type == "scripted" and not self.responses:
            raise ValueError("a scripted backend needs at least one entry in 'responses'")
        if self.type == "chatcompletion" and not self.base_url:
            raise ValueError("backend 'chatcompletion' needs 'base_url' (the server's /v1 address)")
        return self

    @property
    def protocol(self) -> str:
        return PROVIDERS[self.type or ""].protocol


class AgentConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset({"voting_sensitivity", "timeout"})

    id: str | None = None
    system_message: str | None = None
    context_window: int | None = Field(default=None, gt=0)
    backend: BackendConfig
    memory: MemoryConfig | None = None

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str | None) -> str | None:
        allowed = set(string.ascii_letters + string.digits + "_-.")
        if value is not None and (not value or set(value) - allowed):
            raise ValueError(f"agent id {value!r} may use only letters, digits, '_', '-' and '.'")
        return value


class CoordinationConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            "enable_planning_mode", "planning_mode_instruction", "enable_agent_task_planning", "max_tasks_per_plan",
            "task_planning_filesystem_mode", "enable_memory_filesystem_mode", "use_skills", "massgen_skills",
            "skills_directory", "plan_depth", "broadcast", "broadcast_sensitivity", "response_depth",
            "broadcast_timeout", "broadcast_wait_by_default", "max_broadcasts_per_agent", "compression_target_ratio",
            "load_previous_session_skills", "persona_generator", "enable_subagents", "subagent_default_timeout",
            "subagent_min_timeout", "subagent_max_timeout", "subagent_max_concurrent", "subagent_round_timeouts",
            "subagent_orchestrator", "async_subagents", "use_two_tier_workspace", "write_mode",
        }
    )

    max_orchestration_restarts: int = Field(default=0, ge=0, le=10)


class SharedMemoryConfig(Section):
    conversation: bool = False
    persistent: bool = False
    window: int = Field(default=10, gt=0)
    entries: bool = False
    token_budget: int = Field(default=2000, gt=0)


class OrchestratorConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            "snapshot_storage", "agent_temporary_workspace", "context_paths", "session_storage", "dspy",
            "voting_sensitivity", "answer_novelty_requirement", "skip_coordination_rounds", "debug_final_answer",
            "timeout", "voting_threshold", "max_new_answers_global", "coordination_mode", "presenter_agent",
            "novelty_injection",
        }
    )

    max_new_answers_per_agent: int | None = Field(default=None, ge=1)
    max_steps_per_agent: int = Field(default=8, ge=1)
    step_timeout_seconds: float = Field(default=300.0, gt=0)
    max_reasks: int = Field(default=1, ge=0)
    final_presentation: Literal["present", "reuse"] = "present"
    coordination: CoordinationConfig = Field(default_factory=CoordinationConfig)
    shared_memory: SharedMemoryConfig = Field(default_factory=SharedMemoryConfig)


class TimeoutSettings(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {"initial_round_timeout_seconds", "subsequent_round_timeout_seconds", "round_timeout_grace_seconds"}
    )

    orchestrator_timeout_seconds: float = Field(default=1800.0, gt=0)


class UIConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset({"use_orchestrator_for_single_agent", "debug"})

    display_type: Literal["rich_terminal", "simple", "silent"] = "rich_terminal"
    logging_enabled: bool = True
    automation_mode: bool = False


def _default_agent_id(index: int) -> str:
    return f"agent_{chr(ord('a') + index)}" if index < 26 else f"agent_{index + 1}"


class MassGenConfig(Section):
    """A whole config. ``agent:`` (one) is accepted and read as a one-item ``agents:`` list."""

    massgen_retired: ClassVar[dict[str, str]] = {
        key: "a MassGen v1 key; v1 configs are not supported, use 'agents:' with backends"
        for key in (
            "models", "model_configs", "num_agents", "max_rounds", "consensus_threshold", "voting_enabled",
            "enable_voting",
        )
    }

    agents: list[AgentConfig] = Field(default_factory=list)
    agent: AgentConfig | None = None
    orchestrator: OrchestratorConfig = Field(default_factory=OrchestratorConfig)
    timeout_settings: TimeoutSettings = Field(default_factory=TimeoutSettings)
    ui: UIConfig = Field(default_factory=UIConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    session_id: str | None = None

    @model_validator(mode="after")
    def _one_agent_list(self) -> MassGenConfig:
        if self.agent is not None and self.agents:
            raise ValueError("use either 'agent' or 'agents', not both")
        if self.agent is not None:
            self.agents, self.agent = [self.agent], None
        if not self.agents:
            raise ValueError("no agents: add an 'agents:' list (or a single 'agent:')")
        for index, agent in enumerate(self.agents):
            agent.id = agent.id or _default_agent_id(index)
        ids = [agent.id for agent in self.agents]
        duplicates = sorted({agent_id for agent_id in ids if ids.count(agent_id) > 1})
        if duplicates:
            raise ValueError(f"agent ids must be unique; repeated: {', '.join(map(str, duplicates))}")
        return self

    def agent_by_id(self, agent_id: str) -> AgentConfig:
        return next(agent for agent in self.agents if agent.id == agent_id)

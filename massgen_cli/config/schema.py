"""Pydantic models of a MassGen-style YAML config (agents, backend, orchestrator, timeouts, ui)."""

from __future__ import annotations

import string
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from massgen_cli.config.base import Section
from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.problems import repeated, suggest
from massgen_cli.config.providers import (
    AZURE_DEFAULT_API_VERSION,
    PROVIDERS,
    UNSUPPORTED_TYPES,
    infer_backend_type,
)
from massgen_cli.config.tools import BackendToolSettings, ContextPath


class ScriptedCall(Section):
    """One more tool call in a scripted reply."""

    tool: str = Field(description="Tool to call, sent only if the request offers it.")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments of the tool call.")


class ScriptEntry(Section):
    """One scripted response: text, tool calls, a delay, or an injected fault."""

    text: str | None = Field(default=None, description="Text streamed as the reply (before any tool call).")
    tool: str | None = Field(
        default=None, description="Tool to call (new_answer, vote…), sent only if the request offers it."
    )
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments of the tool call.")
    calls: list[ScriptedCall] = Field(
        default_factory=list, description="More tool calls in the same reply, after 'tool' (run together)."
    )
    delay: float = Field(
        default=0.0, ge=0, description="Seconds to wait after the text, before the tool call or the end."
    )
    error: Literal[429, 500, "timeout", "context_length"] | None = Field(
        default=None, description="Fault to inject instead of a reply (after delay)."
    )
    reasoning: str | None = Field(
        default=None, description="Reasoning (thinking) text streamed before the reply."
    )
    echo: str | None = Field(
        default=None,
        description="A regular expression: its first match in the request (newest message first) replaces "
        "'{echo}' in text (or is the text), to show what the model saw.",
    )


class PricingConfig(Section):
    input_per_million: float = Field(ge=0, description="USD per million input tokens.")
    output_per_million: float = Field(ge=0, description="USD per million output tokens.")
    cached_input_per_million: float | None = Field(
        default=None,
        ge=0,
        description="USD per million input tokens read from the prompt cache; null: the input price.",
    )


class BackendConfig(BackendToolSettings):
    """``backend:`` of one agent. ``type`` is inferred from ``model`` when omitted."""

    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {
            # filesystem, workspace, MCP and built-in tools
            "context_write_access_enabled",
            "enforce_read_before_delete",
            "exclude_file_operation_mcps",
            "direct_mcp_servers",
            "disallowed_tools",
            "custom_tools_path",
            "auto_discover_custom_tools",
            "exclude_custom_tools",
            "enable_code_based_tools",
            "shared_tools_directory",
            "hooks",
            "concurrent_tool_execution",
            "max_concurrent_tools",
            "enable_web_search",
            "enable_code_interpreter",
            "enable_code_execution",
            "enable_image_generation",
            "enable_audio_generation",
            "enable_video_generation",
            "enable_file_generation",
            "enable_multimodal_tools",
            "multimodal_config",
            # command-line execution and Docker
            "command_line_docker_image",
            "command_line_docker_memory_limit",
            "command_line_docker_cpu_limit",
            "command_line_docker_network_mode",
            "command_line_docker_enable_sudo",
            "command_line_docker_credentials",
            "command_line_docker_packages",
            "enable_docker_isolation",
            "docker_image",
            "docker_network_mode",
            "docker_memory_limit",
            "docker_cpu_limit",
            # provider-specific options
            "text",
            "reasoning",
            "permission_mode",
            "system_prompt",
            "append_system_prompt",
            "max_thinking_tokens",
            "max_turns",
            "safety_settings",
            "port",
            "separate_reasoning",
            "agent_config",
            "group_config",
            "enable_rate_limit",
            "upload_files",
            "enable_planning_mode",
        }
    )

    type: str | None = Field(
        default=None, description="Backend type (see Backend types); inferred from model when omitted."
    )
    model: str | None = Field(default=None, description="Model name sent to the provider.")
    base_url: str | None = Field(
        default=None, description="Server address of the API; null uses the backend type's default."
    )
    api_key: str | None = Field(
        default=None, description="API key; null reads the backend type's key variable."
    )
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature; null uses the provider's default."
    )
    max_tokens: int | None = Field(
        default=None, gt=0, description="Most tokens generated per call; null uses the provider's default."
    )
    top_p: float | None = Field(
        default=None, ge=0, le=1, description="Nucleus sampling cutoff; null uses the provider's default."
    )
    request_timeout_seconds: float = Field(
        default=120.0,
        gt=0,
        validation_alias=AliasChoices("request_timeout_seconds", "timeout"),
        description="Seconds one request to the provider may take before it fails.",
    )
    max_retries: int = Field(
        default=3,
        ge=0,
        le=10,
        description="Retries of a call that failed with a retryable error (429, 5xx, timeout, lost link).",
    )
    retry_base_delay_seconds: float = Field(
        default=1.0,
        ge=0,
        description="First retry's delay scale in seconds; it doubles with each retry (with jitter).",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra fields added to each request body (provider-specific options).",
    )
    top_k: int | None = Field(
        default=None, gt=0, description="Top-k sampling, for servers that support it (vLLM, llama.cpp…)."
    )
    repetition_penalty: float | None = Field(
        default=None, gt=0, description="Repetition penalty, for servers that support it."
    )
    chat_template_kwargs: dict[str, Any] | None = Field(
        default=None, description="Arguments for the server's chat template (e.g. enable_thinking on vLLM)."
    )
    pricing: PricingConfig | None = Field(
        default=None,
        description="USD per million tokens for this backend (a private server, or a model the price "
        "library does not know); null takes the price from genai-prices. The embedded and scripted models "
        "are free.",
    )
    api_version: str | None = Field(
        default=None,
        description="azure_openai only: the API version; null reads AZURE_OPENAI_API_VERSION, else "
        f"{AZURE_DEFAULT_API_VERSION}.",
    )
    deployment_name: str | None = Field(
        default=None, description="azure_openai only: the deployment to call; null uses 'model'."
    )
    betas: list[str] = Field(
        default_factory=list, description="Anthropic only: beta features, sent as the anthropic-beta header."
    )
    responses: list[ScriptEntry] = Field(
        default_factory=list,
        description="Scripted backend only: one entry per call, in order; the last one repeats.",
    )
    scripted_tool_calls: bool = Field(
        default=True,
        description="Scripted backend only: false plays a model without tool calls, which decides and "
        "calls tools through a JSON schema (as the embedded model does).",
    )

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

    id: str | None = Field(
        default=None, description="Unique agent id; null gives agent_a, agent_b, … by position."
    )
    system_message: str | None = Field(default=None, description="The agent's own system prompt.")
    context_window: int | None = Field(
        default=None, gt=0, description="Context window in tokens; null uses the model's known window."
    )
    backend: BackendConfig = Field(description="The model this agent calls.")
    memory: MemoryConfig | None = Field(
        default=None, description="This agent's memory settings, deep-merged over the global memory block."
    )

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


class UIConfig(Section):
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset(
        {"use_orchestrator_for_single_agent", "debug"}
    )

    display_type: Literal["rich_terminal", "simple", "silent"] = Field(
        default="rich_terminal",
        validation_alias=AliasChoices("display_type", "type"),
        description="Progress on stderr: a Rich live view, plain lines, or nothing ('type' is MassGen's "
        "older name).",
    )
    logging_enabled: bool = Field(
        default=True, description="Write JSON logs and memory dumps under massgen_logs/ in the state folder."
    )
    automation_mode: bool = Field(
        default=False,
        description="Print only the final answer, as --quiet does (for scripts and other agents).",
    )


def _default_agent_id(index: int) -> str:
    return f"agent_{chr(ord('a') + index)}" if index < 26 else f"agent_{index + 1}"


class MassGenConfig(Section):
    """A whole config. ``agent:`` (one) is accepted and read as a one-item ``agents:`` list."""

    massgen_retired: ClassVar[dict[str, str]] = {
        key: "a MassGen v1 key; v1 configs are not supported, use 'agents:' with backends"
        for key in (
            "models",
            "model_configs",
            "num_agents",
            "max_rounds",
            "consensus_threshold",
            "voting_enabled",
            "enable_voting",
        )
    }

    agents: list[AgentConfig] = Field(
        default_factory=list,
        description="The agents, in registration order (vote ties go to the earlier one).",
    )
    agent: AgentConfig | None = Field(
        default=None, description="A single agent, read as a one-item agents list."
    )
    orchestrator: OrchestratorConfig = Field(
        default_factory=OrchestratorConfig, description="How the agents coordinate."
    )
    timeout_settings: TimeoutSettings = Field(
        default_factory=TimeoutSettings, description="Time limits of a turn."
    )
    ui: UIConfig = Field(
        default_factory=UIConfig,
        validation_alias=AliasChoices("ui", "display"),
        description="Progress display and logging ('display' is MassGen's older name).",
    )
    memory: MemoryConfig = Field(
        default_factory=MemoryConfig,
        description="Global memory settings; an agent's memory block is merged over them.",
    )
    session_id: str | None = Field(
        default=None, description="Session to continue, as with --session (the flag wins)."
    )

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
        duplicates = repeated([str(agent_id) for agent_id in ids])
        if duplicates:
            raise ValueError(f"agent ids must be unique; repeated: {', '.join(map(str, duplicates))}")
        return self

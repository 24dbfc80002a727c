"""Pydantic models of a MassGen-style YAML config: the whole config, its agents and ``ui:``; the backend
and orchestrator sections live in ``backend`` and ``orchestrator``."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, PositiveInt, field_validator, model_validator

from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.base import Section, section
from massgen_cli.config.deferred import deferred
from massgen_cli.config.memory import MemoryConfig, persistent_enabled
from massgen_cli.config.orchestrator import OrchestratorConfig, TimeoutSettings, VotingSensitivity
from massgen_cli.config.problems import repeated
from massgen_cli.config.telemetry import TelemetryConfig

if TYPE_CHECKING:
    from massgen_cli.config.hooks import HooksConfig
else:
    HooksConfig = deferred("massgen_cli.config.hooks", "HooksConfig")


class AgentConfig(Section):
    massgen_section: ClassVar[str] = "agent"

    id: str | None = None
    """Unique agent id; null gives agent_a, agent_b, … by position."""
    system_message: str | None = None
    """The agent's own system prompt."""
    append_system_prompt: str | None = None
    """Text appended to the agent's system prompt (after system_message)."""
    voting_sensitivity: VotingSensitivity | None = None
    """This agent's voting style, over orchestrator.voting_sensitivity."""
    context_window: PositiveInt | None = None
    """Context window in tokens; null uses the model's known window."""
    backend: BackendConfig
    """The model this agent calls."""
    memory: MemoryConfig | None = None
    """This agent's memory settings, deep-merged over the global memory block."""
    subagent_agents: list[dict[str, Any]] = Field(default_factory=list)
    """The agents of the teams this agent's subagents run (id, backend), after subagent_orchestrator.agents.
    """

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str | None) -> str | None:
        allowed = set(string.ascii_letters + string.digits + "_-.")
        if value is not None and (not value or set(value) - allowed):
            raise ValueError(f"agent id {value!r} may use only letters, digits, '_', '-' and '.'")
        return value


class UIConfig(Section):
    massgen_section: ClassVar[str] = "ui"

    display_type: Literal["rich_terminal", "textual_terminal", "simple", "silent"] = Field(
        default="rich_terminal", validation_alias=AliasChoices("display_type", "type")
    )
    """Progress on stderr: a Rich live view (also for MassGen's 'textual_terminal'), plain lines, or nothing
    ('type' is MassGen's older name).
    """
    logging_enabled: bool = True
    """Write JSON logs and memory dumps under massgen_logs/ in the state folder."""
    automation_mode: bool = False
    """Print only the final answer, as --quiet does (for scripts and other agents)."""

    @property
    def live_view(self) -> bool:
        """Whether progress is the Rich live view (on a terminal)."""
        return self.display_type in ("rich_terminal", "textual_terminal")


def _default_agent_id(index: int) -> str:
    return f"agent_{chr(ord('a') + index)}" if index < 26 else f"agent_{index + 1}"


class MassGenConfig(Section):
    """A whole config. ``agent:`` (one) is accepted and read as a one-item ``agents:`` list."""

    massgen_section: ClassVar[str] = "config"

    agents: list[AgentConfig] = Field(default_factory=list)
    """The agents, in registration order (vote ties go to the earlier one)."""
    agent: AgentConfig | None = None
    """A single agent, read as a one-item agents list."""
    orchestrator: OrchestratorConfig = section(OrchestratorConfig)
    """How the agents coordinate."""
    timeout_settings: TimeoutSettings = section(TimeoutSettings)
    """Time limits of a turn."""
    ui: UIConfig = Field(default_factory=UIConfig, validation_alias=AliasChoices("ui", "display"))
    """Progress display and logging ('display' is MassGen's older name)."""
    memory: MemoryConfig = section(MemoryConfig)
    """Global memory settings; an agent's memory block is merged over them."""
    session_id: str | None = None
    """Session to continue, as with --session (the flag wins)."""
    telemetry: TelemetryConfig = section(TelemetryConfig)
    """Traces over OpenTelemetry (OTLP/HTTP) with the GenAI semantic conventions; --otel turns them on."""
    hooks: HooksConfig | None = None
    """Commands and Python callables run before and after each tool call and at each turn's start and end (see
    Hooks in the README).
    """
    features: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Settings of features registered beside the built-in ones, by feature name; each block is checked by its
    feature's model when the run is built.
    """

    @property
    def agent_ids(self) -> list[str]:
        """The agents' ids in registration order (every agent has one once the config is loaded)."""
        return [agent.id or "" for agent in self.agents]

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


def long_term_wanted(config: MassGenConfig) -> bool:
    """Whether the config turns long-term memory on for any agent, or for the shared block."""
    settings = [agent.memory or config.memory for agent in config.agents]
    return any(map(persistent_enabled, settings)) or config.orchestrator.shared_memory.persistent

"""The composition root: a run built from its config. It opens the features a config wants by their
declarations (``features.declaration``; built-in and registered ones in ``features.registry``), builds
each agent's toolbox with the features' tools, then the agents and the turn runner; it also names the
memory stores that keep sessions on a server. A feature's own code is imported only when the config
turns it on: adding a feature is one module that declares it, and its registration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from massgen_cli.agent.cap_admission import CapAdmission, Price
from massgen_cli.agent.data import Agent, AgentParts
from massgen_cli.agent.spending import SpendingCaps, SpendingGate
from massgen_cli.agent_builder import build_agents
from massgen_cli.attempts import AttemptPart
from massgen_cli.backends.pricing import cost_of
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.config.problems import describe_error, error_path
from massgen_cli.config.schema import MassGenConfig, long_term_wanted
from massgen_cli.coordination.extension import StepExtension
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import StepContext
from massgen_cli.coordination.turn import Crew, RunRecord, TurnRunner
from massgen_cli.errors import ConfigError
from massgen_cli.events import EventSink
from massgen_cli.features import registry
from massgen_cli.features.declaration import Feature, Opened, Opening, Place
from massgen_cli.features.workspaces import agent_workspaces
from massgen_cli.memory.context.guard import DroppedListener
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.session import SessionMirror
from massgen_cli.tools.toolbox import Toolbox, ToolSources, build_toolbox, own_workspace

if TYPE_CHECKING:
    from massgen_cli.tools.mcp import McpHub

__all__ = ["ComposedRun", "Features", "Place", "session_mirror"]


def session_mirror(config: MassGenConfig) -> tuple[SessionMirror | None, str | None]:
    """Where sessions are kept beyond the state folder: the memory server, when the config keeps
    long-term memory on one (so a session continues on any machine that shares it); and why not, when
    that server cannot be reached."""
    if not long_term_wanted(config):
        return None, None
    from massgen_cli.memory.runtime.opening import store_memory_config

    persistent = store_memory_config(config).persistent_memory
    if not persistent.keeps_truth_on_server:
        return None, None
    from massgen_cli.errors import MassGenError

    try:
        return _server_sessions(persistent), None
    except MassGenError:  # why is said once, by the long-term memory that cannot open either
        return None, "sessions are kept in this state folder only: the memory server cannot be reached"


def _server_sessions(persistent: PersistentMemoryConfig) -> SessionMirror | None:
    """The sessions kept on the configured memory server (PostgreSQL, or a Qdrant server)."""
    if persistent.vector_store == "qdrant":
        from massgen_cli.memory.longterm.store.qdrant.sessions import QdrantSessions
        from massgen_cli.memory.longterm.store.vector_stores import qdrant_server_client

        return QdrantSessions(qdrant_server_client(persistent), persistent.qdrant.collection_name)
    url = persistent.pgvector.connection_string
    if not url:
        return None
    from massgen_cli.memory.longterm.store.server.sessions import ServerSessions

    return ServerSessions(url, persistent.pgvector.collection_name)


@dataclass
class Features:
    """The features a config turns on, opened: step extensions in the order the turn walks them, attempt
    parts in the order they commit, and what each opened, by name."""

    extensions: list[StepExtension] = field(default_factory=list)
    parts: list[AttemptPart] = field(default_factory=list)
    opened: dict[str, Opened] = field(default_factory=dict)

    @property
    def keepers(self) -> dict[str, DroppedListener]:
        """Where compression hands what it drops, by agent."""
        return {agent: keeper for opened in self.opened.values() for agent, keeper in opened.keepers.items()}

    def provided(self, name: str) -> Any:
        """What the feature ``name`` offers (see its declaration), or None when it is off."""
        opened = self.opened.get(name)
        return opened.provides if opened is not None else None


class ComposedRun:
    """The agents of a run, their threads, the turn runner over them and what must be closed."""

    def __init__(self, loaded: LoadedConfig, place: Place, record: RunRecord):
        config, emit = loaded.config, record.emit
        policy = CoordinationPolicy.of(config)
        self.agents: list[Agent] = []
        caps = SpendingCaps.of(config.orchestrator)
        self.spending = spending = SpendingGate(
            caps, record.ledger.usage_of_run, self._settled, emit, above=place.spent_above
        )
        self.features = _features(config, place, emit, spending)
        admission = CapAdmission(spending, _prices(config))
        self.agents = _agents(config, self.features, place, emit, admission)
        self.threads = AgentThreads.load(place.session.directory, saved=place.kept_in is not None)
        context = StepContext(self.threads, tuple(self.features.extensions))
        crew = Crew(self.agents, context, policy, spending)
        self.turns = TurnRunner(crew, place.session, self.features.parts, record)
        self.emit = emit
        self.mcp: McpHub | None = None
        """The run's MCP servers; None until ``connect_mcp`` finds an agent with some."""
        self.mcp_connected = False

    def provided(self, name: str) -> Any:
        """What the feature ``name`` offers, or None when the config leaves it off."""
        return self.features.provided(name)

    async def _settled(self) -> None:
        """Every call that ended is priced and its usage told."""
        await asyncio.gather(*(agent.settled() for agent in self.agents))

    async def connect_mcp(self) -> None:
        """Before the first turn: each agent's MCP servers start (once per run) and their tools join its
        toolbox."""
        if self.mcp_connected:
            return
        self.mcp_connected = True
        for agent in self.agents:
            backend = agent.config.backend
            if backend.mcp_servers:
                workspace = agent.toolbox.roots.base if agent.toolbox.roots is not None else Path.cwd()
                tools = await self._mcp_hub().tools(
                    backend.mcp_servers, workspace, backend.allowed_tools, backend.exclude_tools
                )
                agent.toolbox.add_configured(tools)

    def _mcp_hub(self) -> McpHub:
        """The run's MCP servers (the MCP client is imported only by a run that has some)."""
        if self.mcp is None:
            from massgen_cli.tools.mcp import McpHub

            self.mcp = McpHub(self.emit)
        return self.mcp

    async def aclose(self) -> None:
        """Every backend (and the embedded server), the MCP servers, then each feature that holds
        something open (long-term memory's store), in the order they opened."""
        backends = [agent.backend for agent in self.agents]
        backends += [agent.summary_backend for agent in self.agents if agent.summary_backend is not None]
        closing = [backend.aclose() for backend in backends]
        if self.mcp is not None:
            closing.append(self.mcp.close())
        await asyncio.gather(*closing, return_exceptions=True)
        for opened in self.features.opened.values():
            if opened.close is not None:
                await opened.close()


def _features(config: MassGenConfig, place: Place, emit: EventSink, spending: SpendingGate) -> Features:
    """Each declared feature the config wants, opened after the features it needs; its extension and part
    placed where the declarations put them (see ``features.declaration``)."""
    features, declared = Features(), registry.declared()
    settings = _settings(config, declared)
    for feature in registry.ordered(declared, lambda feature: feature.needs):
        needed = {name: features.opened[name] for name in feature.needs if name in features.opened}
        opening = Opening(config, place, emit, settings.get(feature.name), needed, spending)
        if feature.wanted(opening) and (opened := feature.open(opening)) is not None:
            features.opened[feature.name] = opened
    on = [feature for feature in declared if feature.name in features.opened]
    for feature in registry.ordered(on, lambda feature: feature.steps_after):
        if (extension := features.opened[feature.name].extension) is not None:
            features.extensions.append(extension)
    for feature in registry.ordered(on, lambda feature: feature.commits_after):
        if (part := features.opened[feature.name].part) is not None:
            features.parts.append(part)
    return features


def _settings(config: MassGenConfig, declared: Sequence[Feature]) -> dict[str, Any]:
    """Each feature's ``features.<name>`` block, validated by its model; a block for no declared feature,
    or one its model refuses, is a ``ConfigError`` naming its YAML path."""
    models = {feature.name: feature.settings for feature in declared if feature.settings is not None}
    problems, settings = [], {}
    for name, block in config.features.items():
        model = models.get(name)
        if model is None:
            known = ", ".join(sorted(models)) or "none is registered"
            problems.append(f"features.{name}: no feature takes settings under this name (known: {known})")
            continue
        try:
            settings[name] = model.model_validate(block)
        except ValidationError as error:
            problems += [
                f"{error_path(block, e, f'features.{name}')}: {describe_error(e)}" for e in error.errors()
            ]
    if problems:
        raise ConfigError("the config's features block is not valid:\n" + "\n".join(problems))
    return settings


def _prices(config: MassGenConfig) -> dict[str, Price]:
    """How each agent's calls are priced (its backend's model), for the spending caps' estimates."""
    return {agent.id or "": partial(cost_of, backend=agent.backend) for agent in config.agents}


def _agents(
    config: MassGenConfig, features: Features, place: Place, emit: EventSink, admission: CapAdmission
) -> list[Agent]:
    """Every agent's toolbox (its config's tools, then the features'), then the agents; each request
    passes the features' hooks, then the spending caps."""
    workspaces = agent_workspaces(config)
    parts = {}
    for index, agent_config in enumerate(config.agents):
        agent_id = agent_config.id or ""
        others = tuple(path for owner, path in workspaces.items() if owner != agent_id)
        sources = ToolSources((), (*place.private, *others), place.state_folder)
        toolbox = _toolbox(config, index, features.extensions, sources)
        hooks = (*features.extensions, admission)
        parts[agent_id] = AgentParts(toolbox, features.keepers.get(agent_id), place.state_folder, hooks)
    return build_agents(config, emit, parts)


def _toolbox(
    config: MassGenConfig, index: int, extensions: list[StepExtension], sources: ToolSources
) -> Toolbox:
    """The agent's tools: its config's, with the folders the features let it read, then each feature's."""
    agent_config = config.agents[index]
    agent_id = agent_config.id or ""
    readable = tuple(folder for extension in extensions for folder in extension.readable(agent_id))
    toolbox = build_toolbox(agent_config, index, config.orchestrator, replace(sources, readable=readable))
    workspace = own_workspace(toolbox, agent_config)
    for extension in extensions:
        equipment = extension.equip(agent_id, workspace)
        toolbox.add(equipment.tools, equipment.guidance)
    return toolbox

"""The composition root: a run built from its config. The only module that names every feature and every
store; a feature's code is imported only when the config turns it on.

A new feature is a step extension (``coordination/extension.py``) in ``features/``, with an attempt part
(``attempts.AttemptPart``) if it keeps state that an attempt may roll back; it is registered here, in
``_features``, and nothing else changes: the turn walks the lists it is given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from massgen_cli.attempts import AttemptPart
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.config.schema import MassGenConfig, long_term_wanted
from massgen_cli.coordination.agents import Agent, AgentParts, build_agents
from massgen_cli.coordination.call_answers import Outside
from massgen_cli.coordination.extension import StepExtension
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import StepContext
from massgen_cli.coordination.tally import alias_map
from massgen_cli.coordination.turn import Crew, RunRecord, TurnRunner
from massgen_cli.events import EventSink
from massgen_cli.memory.context.guard import DroppedListener
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.session import Session, SessionMirror
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.paths import Root
from massgen_cli.tools.toolbox import Toolbox, ToolSources, build_toolbox, own_workspace

if TYPE_CHECKING:
    from massgen_cli.features.long_term import LongTermMemory
    from massgen_cli.memory.runtime.opening import LongTermRun
    from massgen_cli.memory.runtime.recall import Recall
    from massgen_cli.memory.shared.memory import SharedMemory
    from massgen_cli.tools.snapshots import Snapshots


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


@dataclass(frozen=True)
class Place:
    """Where a run lives: its session, the state folder (which no agent's tool may reach) and whether
    anything is kept there (``kept_in`` None: it cannot be written), and the folders and files no agent's
    command may see."""

    session: Session
    state_folder: Path
    kept_in: Path | None
    private: tuple[Path, ...] = ()
    outside: Outside = field(default_factory=Outside)


@dataclass
class Features:
    """The features a config turns on: step extensions in the order the turn walks them, attempt parts
    in the order they commit, and the long-term memory and shared memory they opened (None when off)."""

    extensions: list[StepExtension] = field(default_factory=list)
    parts: list[AttemptPart] = field(default_factory=list)
    long_term: LongTermRun | None = None
    long_term_part: LongTermMemory | None = None
    shared: SharedMemory | None = None
    keepers: dict[str, DroppedListener] = field(default_factory=dict)


class ComposedRun:
    """The agents of a run, their threads, the turn runner over them and what must be closed."""

    def __init__(self, loaded: LoadedConfig, place: Place, record: RunRecord):
        config, emit = loaded.config, record.emit
        self.features = _features(config, place, emit)
        self.agents: list[Agent] = _agents(config, self.features, place, emit)
        self.threads = AgentThreads.load(place.session.directory, saved=place.kept_in is not None)
        context = StepContext(self.threads, tuple(self.features.extensions))
        crew = Crew(self.agents, context, CoordinationPolicy.of(config))
        self.turns = TurnRunner(crew, place.session, self.features.parts, record)
        self.mcp = McpHub(emit)
        self.mcp_connected = False

    @property
    def shared(self) -> SharedMemory | None:
        return self.features.shared

    @property
    def long_term(self) -> LongTermRun | None:
        return self.features.long_term

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
                tools = await self.mcp.tools(
                    backend.mcp_servers, workspace, backend.allowed_tools, backend.exclude_tools
                )
                agent.toolbox.add_configured(tools)

    async def aclose(self) -> None:
        """Every backend (and the embedded server), the MCP servers and long-term memory."""
        backends = [agent.backend for agent in self.agents]
        backends += [agent.summary_backend for agent in self.agents if agent.summary_backend is not None]
        await asyncio.gather(
            self.mcp.close(), *(backend.aclose() for backend in backends), return_exceptions=True
        )
        long_term = self.features.long_term
        if long_term is None:
            return
        from massgen_cli.memory.longterm.store.vector_stores import close_clients

        try:
            await long_term.close()
        finally:
            close_clients()


def _features(config: MassGenConfig, place: Place, emit: EventSink) -> Features:
    """Each feature the config turns on, opened; the order of ``extensions`` is the order of the blocks
    after the system prompt (plans, shared, memories) and of the tools' guidance (skills, plans, memory)."""
    features = Features()
    snapshots = _snapshots(config, place, emit, features)
    _skills(config, features)
    _planning(config, place, emit, features)
    _long_term(config, place, emit, features)  # opened before the shared block, which records into it
    _shared(config, place, emit, features)
    _memory_files(config, place, emit, features, snapshots)
    _memory_tools(features)
    _context_copies(config, place, emit, features)
    _from_outside(place, emit, features)
    order = {name: rank for rank, name in enumerate(_EXTENSION_ORDER)}
    features.extensions.sort(key=lambda extension: order[extension.name])
    order = {name: rank for rank, name in enumerate(_PART_ORDER)}
    features.parts.sort(key=lambda part: order[part.part_name])
    return features


_EXTENSION_ORDER = (
    "workspace snapshots",
    "skills",
    "task plans",
    "shared memory",
    "long-term memory",
    "memory files",
    "memory tools",
    "context copies",
    "steering inbox",
    "client tools",
)
_PART_ORDER = (
    "shared memory",
    "workspace snapshots",
    "task plans",
    "memory files",
    "long-term memory",
    "context copies",
)
"""Memory files commit before long-term memory, whose commit writes what they recorded."""


def _labels(config: MassGenConfig) -> dict[str, str]:
    """Each agent's alias, as its peers see it."""
    return {agent_id: alias for alias, agent_id in alias_map(config.agent_ids).items()}


def _snapshots(config: MassGenConfig, place: Place, emit: EventSink, features: Features) -> Snapshots | None:
    """Snapshots when ``orchestrator.snapshot_storage`` is set; returns them for the memory files."""
    storage = config.orchestrator.snapshot_storage
    if storage is None:
        return None
    from massgen_cli.features.snapshots import PeerSnapshots
    from massgen_cli.tools.snapshots import Snapshots

    views = config.orchestrator.agent_temporary_workspace or f"{storage.rstrip('/')}_views"
    snapshots = Snapshots(Path(storage), Path(views), place.session.id, _labels(config))
    features.extensions.append(PeerSnapshots(snapshots, emit))
    features.parts.append(snapshots)
    return snapshots


def _skills(config: MassGenConfig, features: Features) -> None:
    coordination = config.orchestrator.coordination
    if not coordination.use_skills:
        return
    from massgen_cli.features.skills import Skills
    from massgen_cli.tools.skills import discover_skills

    found = discover_skills(Path(coordination.skills_directory), coordination.massgen_skills)
    if found:
        features.extensions.append(Skills(found))


def _planning(config: MassGenConfig, place: Place, emit: EventSink, features: Features) -> None:
    coordination = config.orchestrator.coordination
    if not coordination.enable_agent_task_planning:
        return
    from massgen_cli.features.planning import TaskPlanning
    from massgen_cli.tools.planning import PlanBook, PlanSettings

    settings = PlanSettings(coordination.max_tasks_per_plan, coordination.task_planning_filesystem_mode)
    kept_in = place.session.directory if place.kept_in is not None else None
    book = PlanBook(settings, _labels(config), emit, kept_in)
    features.extensions.append(TaskPlanning(book))
    features.parts.append(book)


def _long_term(config: MassGenConfig, place: Place, emit: EventSink, features: Features) -> None:
    """Long-term memory when any agent or the shared block turns it on; its store opens now, so a
    problem shows before the first turn."""
    if not long_term_wanted(config):
        return
    from massgen_cli.features.long_term import LongTermMemory
    from massgen_cli.memory.runtime.opening import LongTermRun
    from massgen_cli.memory.runtime.recall import Recall
    from massgen_cli.memory.runtime.recording import Recording

    run = LongTermRun(config, place.kept_in, place.session.id, emit)
    recall, recording = Recall(run), Recording(run)
    extension = LongTermMemory(recall, recording)
    features.long_term, features.long_term_part = run, extension
    features.extensions.append(extension)
    features.parts.append(extension)
    for agent_id in config.agent_ids:
        if run.enabled_for(agent_id):
            due = _lookup_due(recall, agent_id)
            features.keepers[agent_id] = recording.dropped_listener(agent_id, due)


def _lookup_due(recall: Recall, agent_id: str) -> Callable[[], None]:
    """After what a compression dropped is written, the agent's next lookup is due."""
    return lambda: recall.refresh(agent_id, "after_compression")


def _shared(config: MassGenConfig, place: Place, emit: EventSink, features: Features) -> None:
    settings = config.orchestrator.shared_memory
    if not (settings.conversation or settings.persistent or settings.entries):
        return
    from massgen_cli.features.shared_block import SharedBlock
    from massgen_cli.memory.shared.memory import RecordingLink, SharedMemoryPlace, open_shared_memory

    run = features.long_term
    link = RecordingLink(run.recorder, run.spool) if run is not None else RecordingLink()
    store = run.store if run is not None else None
    shared_place = SharedMemoryPlace(place.session, store, link, place.kept_in is not None)
    shared = open_shared_memory(config, shared_place, emit)
    features.shared = shared
    features.extensions.append(SharedBlock(shared))
    features.parts.append(shared)


def _memory_files(
    config: MassGenConfig, place: Place, emit: EventSink, features: Features, snapshots: Snapshots | None
) -> None:
    """MassGen's filesystem memory mode; what it recorded is kept in the session's folder."""
    if not config.orchestrator.coordination.enable_memory_filesystem_mode:
        return
    from massgen_cli.features.memory_files import MemoryFilesMode
    from massgen_cli.memory.filesystem import LEDGER_FILE, FileLedger, MemoryFiles

    kept_in = place.session.directory if place.kept_in is not None else None
    ledger = FileLedger(kept_in / LEDGER_FILE if kept_in is not None else None)
    long_term = features.long_term_part
    recorder = long_term.recording if long_term is not None else None
    files = MemoryFiles(_workspaces(config), config.agent_ids, emit, recorder, ledger)
    view = snapshots.view_folder if snapshots is not None else None
    features.extensions.append(MemoryFilesMode(files, view))
    features.parts.append(files)


def _memory_tools(features: Features) -> None:
    long_term = features.long_term_part
    if long_term is None or features.long_term is None:
        return
    from massgen_cli.features.memory_tools import MemoryTools
    from massgen_cli.memory.runtime.agent_tools import AgentMemoryTools

    features.extensions.append(MemoryTools(AgentMemoryTools(features.long_term, long_term.lookup)))


def _context_copies(config: MassGenConfig, place: Place, emit: EventSink, features: Features) -> None:
    """Agents change copies of the writable context paths when write_mode isolates their writes."""
    orchestrator = config.orchestrator
    if not orchestrator.coordination.isolates_writes:
        return
    from massgen_cli.features.context_copies import ContextCopies, WritablePath

    paths = {
        agent.id or "": [
            WritablePath(root.path, root.protected)
            for entry in [*orchestrator.context_paths, *agent.backend.context_paths]
            if entry.permission == "write"
            for root in [Root.of(entry.path, True, protected=entry.protected_paths)]
        ]
        for agent in config.agents
        if agent.backend.cwd is not None
    }
    if not any(paths.values()):
        return
    runs_own = [orchestrator.snapshot_storage, orchestrator.agent_temporary_workspace]
    skip = (
        *(path for path in place.private if path != Path.cwd()),
        *_workspaces(config).values(),
        *(Path(folder).expanduser().resolve() for folder in runs_own if folder),
    )
    policy = orchestrator.coordination.drift_conflict_policy
    copies = ContextCopies(paths, skip, policy, emit)
    features.extensions.append(copies)
    features.parts.append(copies)


def _from_outside(place: Place, emit: EventSink, features: Features) -> None:
    """The run's inbox, read at every step, when someone can write to it; a served request's own tools."""
    if place.outside.inbox is not None:
        from massgen_cli.features.steering import SteeringInbox

        features.extensions.append(SteeringInbox(place.outside.inbox, emit))
    if place.outside.client is not None:
        from massgen_cli.features.client_tools import ClientTools

        features.extensions.append(ClientTools(place.outside.client))


def _workspaces(config: MassGenConfig) -> dict[str, Path]:
    """Each agent's own workspace (``backend.cwd``), resolved."""
    return {
        agent.id or "": Path(agent.backend.cwd).expanduser().resolve()
        for agent in config.agents
        if agent.backend.cwd is not None
    }


def _agents(config: MassGenConfig, features: Features, place: Place, emit: EventSink) -> list[Agent]:
    """Every agent's toolbox (its config's tools, then the features'), then the agents."""
    workspaces = _workspaces(config)
    parts = {}
    for index, agent_config in enumerate(config.agents):
        agent_id = agent_config.id or ""
        others = tuple(path for owner, path in workspaces.items() if owner != agent_id)
        sources = ToolSources((), (*place.private, *others), place.state_folder)
        toolbox = _toolbox(config, index, features.extensions, sources)
        parts[agent_id] = AgentParts(toolbox, features.keepers.get(agent_id), place.state_folder)
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

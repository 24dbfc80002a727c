"""The library entry point: a configured set of agents answering the turns of one session.

``MassGenApp`` owns one event loop for its whole life, so provider clients and the embedded model
server are reused from turn to turn; Ctrl-C during a turn cancels that turn only. It is built in one
order: the session, then the event sink (the view, the ledger and the run log listen to it), then every
part that emits, given the sink and whether the state folder can be written (``saved``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from massgen_cli.attempts import AttemptPart
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.coordination.agents import Agent, Equipment, build_agents
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.steps import StepContext
from massgen_cli.coordination.tally import alias_map
from massgen_cli.coordination.turn import Crew, RunRecord, TurnRunner
from massgen_cli.events import EventSink, Notice
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.memory.filesystem import LEDGER_FILE, FileLedger, MemoryFiles
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.memory import RecordingLink, SharedMemoryPlace, open_shared_memory
from massgen_cli.runlogs.writer import RunLog
from massgen_cli.session import Session, open_session
from massgen_cli.state import write_problem
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.memory_tools import GUIDANCE as MEMORY_TOOLS_GUIDANCE
from massgen_cli.tools.memory_tools import memory_tools
from massgen_cli.tools.planning import PlanBook, PlanSettings
from massgen_cli.tools.skills import Skill, discover_skills
from massgen_cli.tools.snapshots import Snapshots
from massgen_cli.ui import ConsoleView
from massgen_cli.worker_threads import new_event_loop


def choose_session_id(loaded: LoadedConfig, flag: str | None) -> str | None:
    """``--session`` wins, then the config's ``session_id``, then ``persistent_memory.session_name``."""
    return flag or loaded.config.session_id or loaded.config.memory.persistent_memory.session_name


def workspace_snapshots(config: MassGenConfig, session_id: str) -> Snapshots | None:
    """Snapshots when ``orchestrator.snapshot_storage`` is set; peers are shown under their aliases."""
    storage = config.orchestrator.snapshot_storage
    if storage is None:
        return None
    views = config.orchestrator.agent_temporary_workspace or f"{storage.rstrip('/')}_views"
    labels = {agent_id: alias for alias, agent_id in alias_map(config.agent_ids).items()}
    return Snapshots(Path(storage), Path(views), session_id, labels)


def memory_files(
    config: MassGenConfig,
    workspaces: dict[str, Path],
    emit: EventSink,
    memory: MemoryRuntime,
    kept_in: Path | None,
) -> MemoryFiles | None:
    """MassGen's filesystem memory mode, when ``coordination.enable_memory_filesystem_mode`` is on; what
    it recorded is kept in the folder ``kept_in`` (the session's; None: not kept)."""
    if not config.orchestrator.coordination.enable_memory_filesystem_mode:
        return None
    ledger = FileLedger(kept_in / LEDGER_FILE if kept_in is not None else None)
    return MemoryFiles(workspaces, config.agent_ids, emit, memory, ledger)


def unsaved_run_notice(state_dir: Path, problem: str) -> str:
    return (
        f"the state folder {state_dir} cannot be written ({problem}): this run keeps nothing. Answers are "
        "shown, but its session, logs and long-term memory are not saved; free space, fix its permissions "
        "or use --state-dir"
    )


class MassGenApp:
    """Agents, a session, logs and a view, ready to answer questions."""

    def __init__(
        self,
        loaded: LoadedConfig,
        view: ConsoleView,
        *,
        state_dir: Path,
        session_id: str | None = None,
        interactive: bool = False,
    ):
        config = loaded.config
        self.loaded, self.view, self.closed = loaded, view, False
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[TurnResult] | None] | None = None
        self.runner = asyncio.Runner(loop_factory=new_event_loop)  # blocking calls never hold the exit
        self.state_dir = state_dir
        unwritable = write_problem(state_dir)
        saved = unwritable is None
        chosen = choose_session_id(loaded, session_id)
        self.session: Session = open_session(
            state_dir, chosen, interactive=interactive, config_path=str(loaded.path), saved=saved
        )
        ledger = Ledger(config.agent_ids)
        self.events = EventSink(view, ledger)
        self.run_log = RunLog(
            state_dir,
            self.session.id,
            enabled=config.ui.logging_enabled and saved,
            report=self.events,
            on_open=self.session.add_log_folder,
        )
        self.events.subscribe(self.run_log)
        if unwritable is not None:
            self.events(Notice("degraded", unsaved_run_notice(state_dir, unwritable)))
        try:
            self.memory = MemoryRuntime(config, state_dir if saved else None, self.session.id, self.events)
            self.turns = self._turn_runner(config, saved, RunRecord(self.events, self.run_log, ledger))
        except BaseException:  # refused before its first turn (a missing key, a bad part): no session left
            self.session.close()
            raise

    def _turn_runner(self, config: MassGenConfig, saved: bool, record: RunRecord) -> TurnRunner:
        """The agents (with their memory tools), their shared memory, threads, snapshots and MCP servers,
        and the turn runner over them with the attempt parts that are on."""
        memory, emit = self.memory, self.events
        link = RecordingLink(memory.recorder, memory.spool)
        place = SharedMemoryPlace(self.session, memory.store, link, saved)
        self.shared = open_shared_memory(config, place, emit)
        equipment = self._equipment(config, saved)
        self.agents: list[Agent] = build_agents(config, emit, memory, equipment)
        for agent in self.agents:
            if memory.tools_for(agent.id):
                agent.toolbox.add(memory_tools(memory, agent.id), MEMORY_TOOLS_GUIDANCE)
        self.threads = AgentThreads.load(self.session.directory, saved=saved)
        self.mcp = McpHub(emit)
        self.mcp_connected = False
        kept_in = self.session.directory if saved else None
        files = memory_files(config, equipment.workspaces, emit, memory, kept_in)
        context = StepContext(self.threads, memory, self.shared, equipment.snapshots, equipment.plans, files)
        settings = config.orchestrator.shared_memory
        shared_on = settings.conversation or settings.persistent or settings.entries
        parts: list[AttemptPart | None] = [
            self.shared if shared_on else None,
            equipment.snapshots,
            equipment.plans,
            files,  # before long-term memory, whose commit writes what it records
            memory if memory.wanted else None,
        ]
        crew = Crew(config, self.agents, context)
        return TurnRunner(crew, self.session, [part for part in parts if part is not None], record)

    def _equipment(self, config: MassGenConfig, saved: bool) -> Equipment:
        """Peers' snapshots, task plans and skills, as the config turns them on."""
        coordination = config.orchestrator.coordination
        plans = None
        if coordination.enable_agent_task_planning:
            in_workspace = coordination.task_planning_filesystem_mode
            settings = PlanSettings(coordination.max_tasks_per_plan, in_workspace)
            labels = {agent_id: alias for alias, agent_id in alias_map(config.agent_ids).items()}
            plans = PlanBook(settings, labels, self.events, self.session.directory if saved else None)
        skills: tuple[Skill, ...] = ()
        if coordination.use_skills:
            skills = tuple(discover_skills(Path(coordination.skills_directory), coordination.massgen_skills))
        workspaces = {
            agent.id or "": Path(agent.backend.cwd).expanduser().resolve()
            for agent in config.agents
            if agent.backend.cwd is not None
        }
        snapshots = workspace_snapshots(config, self.session.id)
        return Equipment(snapshots, plans, skills, self._private_paths(), workspaces)

    def _private_paths(self) -> tuple[Path, ...]:
        """What no agent's command may see: the runner's folder, its state, the config and the .env files
        that hold keys (the agents' own folders inside are shown again)."""
        config_path = self.loaded.path.expanduser().resolve()
        env_files = (Path.cwd() / ".env", config_path.parent / ".env")
        return (Path.cwd(), self.state_dir, config_path, *env_files)

    def ask(self, question: str) -> TurnResult:
        """Run one turn. KeyboardInterrupt cancels the turn and propagates; the session stays usable."""
        self.view.begin_turn()
        try:
            return self.runner.run(self._turn(question))
        except KeyboardInterrupt:
            self.view.cancel_turn()
            self.view(Notice("warning", "turn cancelled"))
            raise
        finally:
            self.view.end_turn()

    async def _turn(self, question: str) -> TurnResult:
        self._running = (asyncio.get_running_loop(), asyncio.current_task())
        try:
            await self._connect_mcp()
            return await self.turns.run(question)
        finally:
            self._running = None

    async def _connect_mcp(self) -> None:
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
                agent.toolbox.tools.update({tool.name: tool for tool in tools})

    def cancel_running_turn(self) -> None:
        """Cancel the turn ``ask`` is running, from another thread (``ask`` then raises CancelledError)."""
        running = self._running
        if running is not None and running[1] is not None:
            running[0].call_soon_threadsafe(running[1].cancel)

    def reset(self) -> None:
        """Forget the conversation (threads and history); the turn counter goes on."""
        self.runner.run(self.threads.clear_history())
        self.threads.save()
        self.session.reset_history()

    def close(self) -> None:
        """Close every backend (and the embedded server) and the event loop; a second call does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self.runner.run(self._close_backends())
        finally:
            self.runner.close()
            self.session.close()

    async def _close_backends(self) -> None:
        from massgen_cli.memory.longterm.store.vector_stores import close_clients

        backends = [agent.backend for agent in self.agents]
        backends += [agent.summary_backend for agent in self.agents if agent.summary_backend is not None]
        await asyncio.gather(
            self.mcp.close(), *(backend.aclose() for backend in backends), return_exceptions=True
        )
        try:
            await self.memory.close()
        finally:
            close_clients()

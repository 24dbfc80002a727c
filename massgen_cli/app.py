"""The library entry point: a configured set of agents answering the turns of one session.

``MassGenApp`` owns one event loop for its whole life, so provider clients and the embedded model
server are reused from turn to turn; Ctrl-C during a turn cancels that turn only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TextIO

from rich.console import Console

from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.coordination.agents import Agent, build_agents
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.tally import alias_map
from massgen_cli.coordination.turn import TurnRunner
from massgen_cli.events import Notice, RunEvent
from massgen_cli.logs import RunLog
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.parts import SharedParts
from massgen_cli.session import Session, open_session
from massgen_cli.state import write_problem
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.snapshots import Snapshots
from massgen_cli.ui import ConsoleView


def choose_session_id(loaded: LoadedConfig, flag: str | None) -> str | None:
    """``--session`` wins, then the config's ``session_id``, then ``persistent_memory.session_name``."""
    return flag or loaded.config.session_id or loaded.config.memory.persistent_memory.session_name


def workspace_snapshots(config: MassGenConfig, session_id: str) -> Snapshots | None:
    """Snapshots when ``orchestrator.snapshot_storage`` is set; peers are shown under their aliases."""
    storage = config.orchestrator.snapshot_storage
    if storage is None:
        return None
    views = config.orchestrator.agent_temporary_workspace or f"{storage.rstrip('/')}_views"
    labels = {agent_id: alias for alias, agent_id in alias_map([a.id or "" for a in config.agents]).items()}
    return Snapshots(Path(storage), Path(views), session_id, labels)


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
        *,
        state_dir: Path,
        console: Console,
        session_id: str | None = None,
        interactive: bool = False,
        quiet: bool = False,
        live: bool = False,
        out: TextIO | None = None,
        debug: bool = False,
    ):
        self.loaded = loaded
        self.closed = False
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[TurnResult] | None] | None = None
        self.runner = asyncio.Runner()
        unwritable = write_problem(state_dir)
        saved = unwritable is None
        self.session: Session = open_session(
            state_dir,
            choose_session_id(loaded, session_id),
            interactive=interactive,
            config_path=str(loaded.path),
            saved=saved,
        )
        config = loaded.config
        self.view = ConsoleView(
            [a.id or "" for a in config.agents], console=console, out=out, live=live, quiet=quiet, debug=debug
        )
        if unwritable is not None:
            self.view(Notice("degraded", unsaved_run_notice(state_dir, unwritable)))
        emit = self._emit
        self.memory = MemoryRuntime(config, state_dir if saved else None, self.session.id, emit)
        self.snapshots = workspace_snapshots(config, self.session.id)
        self.agents: list[Agent] = build_agents(config, emit, self.memory, self.snapshots)
        self.run_log = RunLog(state_dir, enabled=config.ui.logging_enabled and saved)
        self.threads = AgentThreads.load(self.session.directory)
        self.shared = SharedParts.open(config, self.session.directory, self.memory.store)
        if not saved:
            self.threads.path = None
            self.shared.stop_saving()
        self.mcp = McpHub(emit)
        self.turns = TurnRunner(
            config,
            self.agents,
            self.session,
            self.threads,
            self.run_log,
            self.view,
            memory=self.memory,
            shared=self.shared,
            mcp=self.mcp,
            snapshots=self.snapshots,
        )

    def _emit(self, event: RunEvent) -> None:
        turns = getattr(self, "turns", None)  # memory reports while the runner is still being built
        (turns.emit if turns is not None else self.view)(event)

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
            return await self.turns.run(question)
        finally:
            self._running = None

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

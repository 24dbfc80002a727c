"""The library entry point: a configured set of agents answering the turns of one session.

``MassGenApp`` owns one event loop for its whole life, so provider clients and the embedded model
server are reused from turn to turn; Ctrl-C during a turn cancels that turn only. It keeps the session
loop (ask, reset, close) and builds in one order: the session, then the event sink (the caller's
listeners, the ledger and the run log hear it), then the run itself, which the composition root
(``compose.py``) builds from the config with the sink and whether the state folder can be written.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from massgen_cli.agent.data import Agent
from massgen_cli.agent.spending import SharedSpending
from massgen_cli.compose import ComposedRun, Place, session_mirror
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.coordination.call_answers import Outside
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.turn import RunRecord
from massgen_cli.events import EventSink, Listener, Notice
from massgen_cli.listeners import turn_listeners
from massgen_cli.messages import Message
from massgen_cli.runlogs.writer import RunLog
from massgen_cli.session import Session, open_session
from massgen_cli.state import known_state_folders, write_problem
from massgen_cli.subteams import SubTeams
from massgen_cli.worker_threads import new_event_loop


def choose_session_id(loaded: LoadedConfig, flag: str | None) -> str | None:
    """``--session`` wins, then the config's ``session_id``, then ``persistent_memory.session_name``."""
    return flag or loaded.config.session_id or loaded.config.memory.persistent_memory.session_name


def unsaved_run_notice(state_dir: Path, problem: str) -> str:
    return (
        f"the state folder {state_dir} cannot be written ({problem}): this run keeps nothing. Answers are "
        "shown, but its session, logs and long-term memory are not saved; free space, fix its permissions "
        "or use --state-dir"
    )


class MassGenApp:
    """Agents, a session and logs, ready to answer questions. ``listeners`` hear every event of the run
    (the terminal's view is one; a ``listeners.TurnListener`` is also told when each turn begins, ends
    or is cancelled); ``outside``: what reaches its turns from outside, messages sent during a turn for
    the agents to read at their next step, a served request's own tools."""

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        listeners: tuple[Listener, ...] = (),
        state_dir: Path,
        session_id: str | None = None,
        interactive: bool = False,
        outside: Outside | None = None,
    ):
        config = loaded.config
        self.loaded, self.closed = loaded, False
        self.turn_listeners = turn_listeners(listeners)
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[TurnResult] | None] | None = None
        self._cancelling = threading.Lock()
        self._cancel_next = False
        self.runner = asyncio.Runner(loop_factory=new_event_loop)  # blocking calls never hold the exit
        self.state_dir = state_dir
        unwritable = write_problem(state_dir)
        saved = unwritable is None
        self.mirror, mirror_problem = session_mirror(config) if saved else (None, None)
        self.session: Session = self._opened_session(
            choose_session_id(loaded, session_id), interactive, saved, unreachable=mirror_problem is not None
        )
        self.ledger = ledger = Ledger(config.agent_ids)
        self.events = EventSink(*listeners, ledger)
        self.run_log = RunLog(
            state_dir,
            self.session.id,
            enabled=config.ui.logging_enabled and saved,
            report=self.events,
            on_open=self.session.add_log_folder,
        )
        self.events.subscribe(self.run_log)
        for warning in loaded.warnings:  # said on the console at load; kept in the run's log and summaries
            said = Notice("warning", warning)
            ledger(said)
            self.run_log(said)
        if unwritable is not None:
            self.events(Notice("degraded", unsaved_run_notice(state_dir, unwritable)))
        self._say_mirror_problem()
        try:
            kept_in = state_dir if saved else None
            place = Place(
                self.session, state_dir, kept_in, self._private_paths(), outside or Outside(), SubTeams()
            )
            self.run = ComposedRun(loaded, place, RunRecord(self.events, self.run_log, ledger))
        except BaseException:  # refused before its first turn (a missing key, a bad part): no session left
            self.session.close()
            self._close_mirror()
            raise

    def _opened_session(
        self, chosen: str | None, interactive: bool, saved: bool, *, unreachable: bool
    ) -> Session:
        """The session the run continues or starts (the mirror closed again when it cannot open)."""
        try:
            session = open_session(
                self.state_dir,
                chosen,
                interactive=interactive,
                config_path=str(self.loaded.path),
                saved=saved,
                mirror=self.mirror,
                unreachable=unreachable,
            )
        except BaseException:
            self._close_mirror()
            raise
        if self.loaded.built is not None and saved:
            session.keep_built_config(self.loaded.built)
        return session

    def share_spending(self, shared: SharedSpending) -> None:
        """Let the run's spending caps count what the other runs sharing ``shared`` spend (a batch's
        questions under one cap), and add what it spends to it; before its first turn."""
        key = shared.join()
        self.events.subscribe(shared.counting(key))
        self.run.spending.share(shared, key)

    @property
    def agents(self) -> list[Agent]:
        return self.run.agents

    def _private_paths(self) -> tuple[Path, ...]:
        """What no agent's command may see: the runner's folder, its state and every other state folder
        the user has used, the config and the .env files that hold keys (the agents' own folders inside
        are shown again)."""
        config_path = self.loaded.path.expanduser().resolve()
        env_files = (Path.cwd() / ".env", config_path.parent / ".env")
        return (Path.cwd(), self.state_dir, *known_state_folders(), config_path, *env_files)

    def ask(self, question: str) -> TurnResult:
        """Run one turn. KeyboardInterrupt cancels the turn and propagates; the session stays usable."""
        for listener in self.turn_listeners:
            listener.begin_turn()
        try:
            return self.runner.run(self._turn(question))
        except KeyboardInterrupt:  # the caller says what was cancelled and what goes on
            for listener in self.turn_listeners:
                listener.cancel_turn()
            raise
        finally:
            self._say_mirror_problem()
            for listener in self.turn_listeners:
                listener.end_turn()

    async def _turn(self, question: str) -> TurnResult:
        with self._cancelling:
            self._running = (asyncio.get_running_loop(), asyncio.current_task())
            cancelled, self._cancel_next = self._cancel_next, False
        try:
            if cancelled:
                raise asyncio.CancelledError
            await self.run.connect_mcp()
            return await self.run.turns.run(question)
        finally:
            with self._cancelling:  # a cancel holding the lock still finds the loop running
                self._running = None

    def cancel_running_turn(self) -> None:
        """Cancel the turn ``ask`` is running, from another thread (``ask`` then raises CancelledError).
        Called while no turn runs, it cancels the next one as it starts: a cancel that comes just before
        ``ask`` begins its turn is not lost."""
        with self._cancelling:
            running = self._running
            if running is None or running[1] is None:
                self._cancel_next = True
            else:
                running[0].call_soon_threadsafe(running[1].cancel)

    def adopt_conversation(self, messages: list[Message]) -> None:
        """Take ``messages`` (user and assistant messages, oldest first) as the conversation so far:
        each agent's thread gets them, as if the session had held those turns."""
        threads = self.run.threads
        for agent in self.agents:
            for message in messages:
                threads.thread(agent.id).add_now(message, agent_id=agent.id)
        threads.save()

    def reset(self) -> None:
        """Start a new conversation: the agents' threads are forgotten; the session keeps its turns, what
        they spent and its turn counter."""
        threads = self.run.threads
        self.runner.run(threads.clear_history())
        threads.save()
        self.session.new_conversation()

    def close(self) -> None:
        """Close every backend (and the embedded server) and the event loop; a second call does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self.runner.run(self.run.aclose())
        finally:
            self.runner.close()
            self.session.close()
            self._close_mirror()

    def _say_mirror_problem(self) -> None:
        """Why the session is kept in the state folder only, or what was filed on the memory server,
        said once."""
        session = self.session
        problem, filed = session.mirror_problem, session.filed_notice
        session.mirror_problem = session.filed_notice = None
        if filed:
            self.events(Notice("info", filed))
        if problem:
            self.events(Notice("degraded", problem))

    def _close_mirror(self) -> None:
        if self.mirror is not None:
            self.mirror.close()

"""The turns a server runs. Each request's turn runs in a worker thread of its own with its own
``MassGenApp`` (its own event loop, session and log folder, as each question of a batch does); its
events reach the server's event loop as they happen, for whoever subscribed (the reply, and what else
may watch a run). ``Runs`` holds the limits: at most ``limit`` turns at once, at most ``max_waiting``
more waiting in line (the next gets 429), one turn at a time per session; ``cancel_all`` ends them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from massgen_cli.coordination.call_answers import ClientTurn, Outside
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.events import Listener, RunEvent
from massgen_cli.inbox import Inbox
from massgen_cli.serve.finished import FINISHED_KEPT, FinishedRun, finished_run
from massgen_cli.serve.kept_items import KeptItems
from massgen_cli.serve.models import ServedModel
from massgen_cli.serve.wire import ApiError, ChatAsk
from massgen_cli.worker_threads import DaemonThreadExecutor

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp

log = logging.getLogger("massgen_cli.serve")


@dataclass(frozen=True)
class Opened:
    """The run's app is ready: its session is held, the turn begins."""

    session_id: str


@dataclass(frozen=True)
class Ended:
    """The turn is over: answered (``result``), failed (``error``) or cancelled."""

    result: TurnResult | None = None
    error: Exception | None = None
    cancelled: bool = False


@dataclass(frozen=True)
class Steered:
    """A message was sent to the run's inbox (the agents read it at their next step)."""

    text: str


Item = RunEvent | Opened | Ended | Steered


class LiveRun:
    """One request's turn: ``run`` runs it to its end in a worker thread (its app closed), ``cancel``
    stops it from any thread (the agents' streams are cancelled), ``subscribe`` hears it, ``steer``
    sends its agents a message for their next step."""

    def __init__(
        self,
        ask: ChatAsk,
        served: ServedModel,
        state_dir: Path,
        owner: str | None = None,
        listeners: tuple[Listener, ...] = (),
    ):
        self.id = uuid.uuid4().hex
        self.ask, self.served, self.state_dir = ask, served, state_dir
        self.owner = owner
        """The tenant whose run it is (None: the server has no tenants)."""
        self.listeners = listeners
        """What hears the run besides its subscribers (``massgen --web``: the terminal's view, as a run
        without it shows)."""
        self.app: MassGenApp | None = None
        self.started = time.time()
        self.inbox = Inbox()
        self.client = ClientTurn(ask.tools, ask.exchange)
        """The request's own tools, and the calls of them the turn answers with."""
        kept: KeptItems[Item] = KeptItems()
        self.said, self.said_at, self._kept = kept.items, kept.at, kept
        """Everything the run said so far, for a watcher who comes in late (its streamed text bounded),
        and when each item (by ``id``) was said: a late watcher sees when it happened."""
        self.ended: Ended | None = None
        """How the run ended, once it has (its app may still be closing)."""
        self._subscribers: list[asyncio.Queue[Item]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._cancelled = False

    def subscribe(self, *, replay: bool = False) -> asyncio.Queue[Item]:
        """A queue of everything the run says from now on (``replay``: and what it said before), ending
        with ``Ended``; from the server's loop."""
        queue: asyncio.Queue[Item] = asyncio.Queue()
        for item in self.said if replay else ():
            queue.put_nowait(item)
        self._subscribers.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Item]) -> None:
        if queue in self._subscribers:
            self._subscribers.remove(queue)

    def steer(self, text: str) -> str:
        """Send the agents ``text`` (a ``ValueError`` when it is empty); from the server's loop."""
        sent = self.inbox.post(text)
        self._deliver(Steered(sent))
        return sent

    async def run(self, executor: DaemonThreadExecutor) -> None:
        self._loop = asyncio.get_running_loop()
        await self._loop.run_in_executor(executor, self._work)

    def cancel(self) -> None:
        """Cancel the turn (before it starts too); its log records it cancelled."""
        with self._lock:
            self._cancelled = True
            app = self.app
        if app is not None:
            app.cancel_running_turn()

    def _work(self) -> None:
        app = None
        try:
            app = self._open()
            self._publish(Opened(app.session.id))
            if self.ask.history and not app.session.history():  # a new conversation: the client's
                app.adopt_conversation(self.ask.history)
            self._publish(Ended(app.ask(self.ask.question)))
        except asyncio.CancelledError:
            self._publish(Ended(cancelled=True))
        except Exception as error:  # the request's failure, answered to its client
            self._publish(Ended(error=error))
        finally:
            if app is not None:
                _close(app)

    def _open(self) -> MassGenApp:
        from massgen_cli.app import MassGenApp

        loaded = self.served.loaded
        # A served run speaks through its events; --web's also shows on the terminal.
        app = MassGenApp(
            loaded,
            listeners=self.listeners,
            state_dir=self.state_dir,
            session_id=self.ask.session_id,
            outside=Outside(self.inbox, self.client),
        )
        app.events.subscribe(self._publish)
        try:
            _refuse_clashes(self.client, app)
        except ApiError:
            _close(app)
            raise
        with self._lock:
            self.app = app
            cancelled = self._cancelled
        if cancelled:
            app.cancel_running_turn()  # its turn ends as it starts
        return app

    def _publish(self, item: Item) -> None:
        """From the worker thread: hand ``item`` to the server's loop (gone when the server has stopped)."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening any more
            loop.call_soon_threadsafe(self._deliver, item, time.time())

    def refused(self, error: ApiError) -> None:
        """The run never started: ``error`` says why (the server was busy or stopping); from the server's
        loop."""
        self._deliver(Ended(error=error))

    def _deliver(self, item: Item, at: float | None = None) -> None:
        if isinstance(item, Ended):
            self.ended = item
        self._kept.keep(item, at if at is not None else time.time())
        for queue in self._subscribers:
            queue.put_nowait(item)


def _refuse_clashes(client: ClientTurn, app: MassGenApp) -> None:
    """A 400 for a client's tool named as an agent's own tool: a call of it could not be told apart."""
    for agent in app.agents:
        for index, tool in enumerate(client.tools):
            if tool.name in agent.toolbox:
                raise ApiError(
                    400,
                    f"the tool {tool.name!r} is a tool of the agent {agent.id} already; rename it",
                    param=f"tools[{index}]",
                    code="tool_name_taken",
                )


def _close(app: MassGenApp) -> None:
    """Close a run's app; its client has its answer already, so a failure here is the server's to say."""
    try:
        app.close()
    except Exception as error:
        log.warning("closing the run of session %s failed: %s", app.session.id, error)


class Runs:
    """The server's turns: the ones running (``live``, by run id), what is kept of the finished ones
    (``finished``, newest first) and the limits they run under."""

    def __init__(self, limit: int, max_waiting: int):
        self.limit, self.max_waiting = limit, max_waiting
        self.live: dict[str, LiveRun] = {}
        self.finished: deque[FinishedRun] = deque(maxlen=FINISHED_KEPT)
        self.executor = DaemonThreadExecutor("massgen-serve")
        self.closing = False
        self._slots = asyncio.Semaphore(limit)
        self._waiting = 0
        self._sessions = SessionLocks()
        self._unattended: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def turn_for(self, run: LiveRun) -> AsyncIterator[None]:
        """Hold a place for ``run``: its session's turn, then one of the ``limit`` slots, waiting in line
        for them; an ``ApiError`` (429) when ``max_waiting`` requests wait already, (503) when the server
        is stopping."""
        session = _session_key(run)
        self.refuse_when_full(run)
        self._waiting += 1
        in_line = True
        try:
            async with self._sessions.turn(session), self._slots:
                self._waiting, in_line = self._waiting - 1, False
                self._refuse_when_closing()
                self.live[run.id] = run
                try:
                    yield
                finally:
                    del self.live[run.id]
                    self._keep(run)
        finally:
            if in_line:
                self._waiting -= 1

    def refuse_when_full(self, run: LiveRun) -> None:
        """An ``ApiError``: 429 when ``run`` would wait and ``max_waiting`` requests wait already, 503 when
        the server is stopping."""
        self._refuse_when_closing()
        busy = self._slots.locked() or self._sessions.busy(_session_key(run))
        if busy and self._waiting >= self.max_waiting:
            raise ApiError(
                429,
                f"the server is busy ({self.limit} turns running, {self._waiting} waiting); try again later",
                kind="rate_limit_error",
                code="server_busy",
            )

    def start_unattended(self, run: LiveRun) -> None:
        """Run ``run`` with no client waiting for it (a question asked on the page), under the same
        limits: refused at once (``refuse_when_full``) as a request is; ``close`` waits for it."""
        self.refuse_when_full(run)
        task = asyncio.create_task(self._unattended_turn(run), name=f"run:{run.id}")
        self._unattended.add(task)
        task.add_done_callback(self._unattended.discard)

    async def _unattended_turn(self, run: LiveRun) -> None:
        try:
            async with self.turn_for(run):
                await run.run(self.executor)
        except ApiError as error:  # the line filled up, or the server began to stop, meanwhile
            run.refused(error)
            self._keep(run)

    def _keep(self, run: LiveRun) -> None:
        if run.ended is not None:
            self.finished.appendleft(finished_run(run, run.ended))

    async def close(self) -> None:
        """Cancel every turn, wait for the unattended ones and the worker threads to end."""
        self.cancel_all()
        await asyncio.gather(*self._unattended, return_exceptions=True)
        await asyncio.to_thread(self.executor.shutdown, wait=True)

    @property
    def waiting(self) -> int:
        """How many requests wait for their session or a slot."""
        return self._waiting

    def cancel_all(self) -> None:
        """Take no more turns and cancel the running ones (from the server's loop)."""
        self.closing = True
        for run in list(self.live.values()):
            run.cancel()

    def _refuse_when_closing(self) -> None:
        if self.closing:
            raise ApiError(503, "the server is stopping", kind="server_error", code="server_stopping")


def _session_key(run: LiveRun) -> str | None:
    """The session ``run`` holds, told apart by tenant (None: a temporary session of its own)."""
    return f"{run.owner or ''}/{run.ask.session_id}" if run.ask.session_id else None


class SessionLocks:
    """One turn at a time per session (a session is held by one app at a time); a lock lives while
    someone holds it or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def busy(self, session: str | None) -> bool:
        return session is not None and session in self._locks

    @asynccontextmanager
    async def turn(self, session: str | None) -> AsyncIterator[None]:
        if session is None:
            yield
            return
        lock, users = self._locks.get(session, (asyncio.Lock(), 0))
        self._locks[session] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[session]
            if users == 1:
                del self._locks[session]
            else:
                self._locks[session] = (lock, users - 1)

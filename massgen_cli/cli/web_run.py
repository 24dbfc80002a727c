"""``massgen --web "question"``: one run, watched and steered in the live web view, served on 127.0.0.1
while the run goes, behind a token made at start (its address, token included, on stderr, as Jupyter
prints its own). The answer goes to stdout as without the view, and what a script reads of a run
(``--automation``, ``--stream-events``, ``--output-file``) as without it too; the server stops when the
run ends (Ctrl-C or SIGTERM cancel the run, and it stops too). The page asks no other question: this
process serves its one run."""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from massgen_cli.cli.automation import Outputs, RunWatch
from massgen_cli.redaction import remember
from massgen_cli.serve.api import ServerSettings, create_app
from massgen_cli.serve.command import StoppingServer, listen, stopping_server
from massgen_cli.serve.models import ServedModel, ServedModels
from massgen_cli.serve.runs import Ended, LiveRun, Runs
from massgen_cli.serve.wire import ChatAsk
from massgen_cli.state import resolve_state_dir
from massgen_cli.ui import ConsoleView

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp

HOST = "127.0.0.1"


@dataclass(frozen=True)
class WebRun:
    """What ``massgen --web`` was asked: the question, the config (None: the default), the state folder,
    the session (None: a temporary one), the port (0: a free one) and what a script reads of it."""

    question: str
    config: str | None = None
    state_dir: Path | None = None
    session: str | None = None
    port: int = 0
    outputs: Outputs = field(default_factory=Outputs)


def run_with_web_view(options: WebRun, watch: RunWatch) -> int:
    """Serve the view, run the question, print its answer; the exit code: 0 answered, 1 no answer,
    130 cancelled. A config or start problem is a ``ConfigError``/``UsageError`` before anything runs.
    ``watch`` serves ``options.outputs`` (the caller finishes it with the exit code)."""
    options.outputs.check(options.question)
    models = ServedModels.load([options.config] if options.config else [])
    token = secrets.token_urlsafe(32)
    remember([token])
    settings = ServerSettings(models, resolve_state_dir(options.state_dir), token, questions=False)
    listener = listen(HOST, options.port)
    app = create_app(settings)
    runs: Runs = app.state.runs
    server = stopping_server(app, runs, debug=False)
    served = models.served[0]
    watch.prepare(served.loaded.config)
    ask = ChatAsk(served.id, options.question, [], options.session, stream=False, include_usage=False)
    view = _terminal_view(served.loaded.config.agent_ids, watch.answer_out(), quiet=options.outputs.automated)
    run = WatchedRun(ask, served, settings.state_dir, view=view, watch=watch)
    address = f"http://{HOST}:{listener.getsockname()[1]}/?token={token}"
    print(f"massgen --web: watch and steer the run at {address}", file=sys.stderr, flush=True)
    asyncio.run(_serve_while_running(server, listener, runs, run))
    if run.app is not None and run.app.run_log.written:
        view.log_folder(run.app.run_log.directory)
    return _said(next(item for item in reversed(run.said) if isinstance(item, Ended)))


class WatchedRun(LiveRun):
    """The one run, whose app ``watch`` listens to as it listens to a run without the view (the
    automation lines, the status file, the event stream)."""

    def __init__(
        self, ask: ChatAsk, served: ServedModel, state_dir: Path, *, view: ConsoleView, watch: RunWatch
    ):
        super().__init__(ask, served, state_dir, listeners=(view,))
        self.watch = watch

    def _open(self) -> MassGenApp:
        app = super()._open()
        self.watch.attach(app, self.ask.question)
        return app


def _terminal_view(agent_ids: list[str], out: TextIO | None, *, quiet: bool) -> ConsoleView:
    """The terminal shows the run as it shows one without the web view (the lines, not the live panels,
    which would fight the server's own output): the answer on stdout (``out``), the rest on stderr;
    ``quiet``, as an automated run, only warnings."""
    from rich.console import Console

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    return ConsoleView(agent_ids, console=console, out=out or sys.stdout, quiet=quiet)


async def _serve_while_running(
    server: StoppingServer, listener: socket.socket, runs: Runs, run: LiveRun
) -> None:
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        async with runs.turn_for(run):
            await run.run(runs.executor)
    finally:
        server.should_exit = True
        await serving


def _said(ended: Ended) -> int:
    """Why there is no answer, on stderr (the view wrote the answer); the exit code."""
    if ended.error is not None:
        raise ended.error
    if ended.cancelled or ended.result is None:
        print("massgen --web: the run was cancelled", file=sys.stderr)
        return 130
    if ended.result.final_answer is None:
        print(f"massgen --web: no answer: {ended.result.end_reason}", file=sys.stderr)
        return 1
    return 0  # the view wrote the answer to stdout

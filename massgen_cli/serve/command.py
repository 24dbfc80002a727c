"""``massgen serve``: load the configs, check the address and the token, listen, and run the app on
uvicorn until Ctrl-C or SIGTERM, which cancel the running turns (their clients get 503; their sessions
are kept) and stop the server (exit 0)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, cast

import uvicorn
from rich.console import Console
from rich.markup import escape
from starlette.applications import Starlette

from massgen_cli.errors import UsageError
from massgen_cli.redaction import remember
from massgen_cli.serve.api import ServerSettings, create_app
from massgen_cli.serve.guard import ANY_HOST, answered_names
from massgen_cli.serve.models import ServedModels
from massgen_cli.serve.runs import Runs
from massgen_cli.serve.tenants import Tenants, refuse_shared_memory
from massgen_cli.state import resolve_state_dir

if TYPE_CHECKING:
    from uvicorn._types import ASGIApplication

DEFAULT_PORT = 4000
"""MassGen's server's port."""
BACKLOG = 128
GRACEFUL_STOP_S = 30
"""How long a stop waits for cancelled turns to close before it cuts their connections."""


@dataclass(frozen=True)
class ServeOptions:
    """What the command line asked for."""

    configs: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_concurrent: int = 4
    max_waiting: int = 64
    api_key_env: str | None = None
    token: str | None = None
    state_dir: Path | None = None
    debug: bool = False
    allowed_hosts: tuple[str, ...] = ()
    keys: Path | None = None


def serve(options: ServeOptions) -> int:
    """Serve until stopped; a ``UsageError`` or ``ConfigError`` (exit 2) before anything is served."""
    if not (options.token or options.api_key_env or options.keys):
        refuse_open_host(options.host, guarded=False)
    models = ServedModels.load(options.configs)  # loads the .env files the token may be in
    token = server_token(options)
    refuse_open_host(options.host, guarded=bool(token or options.keys))
    state_dir = resolve_state_dir(options.state_dir)
    tenants = server_tenants(options, models, state_dir)
    remember([token, *(tenant.token for tenant in (tenants.tenants if tenants else []))])
    settings = ServerSettings(
        models,
        state_dir,
        token,
        options.max_concurrent,
        options.max_waiting,
        answered_names(options.host, options.allowed_hosts),
        tenants=tenants,
    )
    listener = listen(options.host, options.port)
    app = create_app(settings)
    server = stopping_server(app, app.state.runs, debug=options.debug)
    _announce(settings, listener)
    with contextlib.suppress(KeyboardInterrupt):  # the signal that stopped it, raised again once stopped
        server.run(sockets=[listener])
    print("massgen serve: stopped", file=sys.stderr)
    return 0


def server_token(options: ServeOptions) -> str | None:
    """The bearer token clients must send: the value of ``--api-key-env``'s variable, or ``--token``."""
    if options.token and options.api_key_env:
        raise UsageError("give the token one way: --api-key-env VAR or --token")
    if options.api_key_env is None:
        return options.token or None
    value = os.environ.get(options.api_key_env, "").strip()
    if not value:
        raise UsageError(f"--api-key-env {options.api_key_env}: that variable is not set or is empty")
    return value


def server_tenants(options: ServeOptions, models: ServedModels, state_dir: Path) -> Tenants | None:
    """``--keys``' tenants (None without it); a ``UsageError`` beside another token, or for a config
    whose long-term memory the tenants would share."""
    if options.keys is None:
        return None
    if options.token or options.api_key_env:
        raise UsageError("give the tokens one way: --keys FILE, or --api-key-env VAR (or --token)")
    refuse_shared_memory(models)
    return Tenants.load(options.keys, state_dir)


def refuse_open_host(host: str, *, guarded: bool) -> None:
    """A server other machines can reach needs a token: a ``UsageError`` for any host but this one's
    own (localhost, 127.0.0.1, ::1) unless ``guarded`` (a token or tenants)."""
    if guarded or is_loopback(host):
        return
    raise UsageError(
        f"--host {host} lets other machines reach the server: require a token with --api-key-env VAR "
        "(or --token), or serve on 127.0.0.1"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one); a ``UsageError`` saying why not."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise UsageError(f"--host {host}: {error.strerror}") from None
    listener = socket.socket(family, kind)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
        listener.listen(BACKLOG)
    except OSError as error:
        listener.close()
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}; choose another --port") from None
    return listener


class StoppingServer(uvicorn.Server):
    """uvicorn's server that, told to stop, first cancels the running turns (rather than waiting for
    them to end)."""

    def __init__(self, config: uvicorn.Config, runs: Runs):
        super().__init__(config)
        self.runs = runs
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self.loop is not None:  # a signal handler: the loop is told, never entered from here
            self.loop.call_soon_threadsafe(self.runs.cancel_all)


def stopping_server(app: Starlette, runs: Runs, *, debug: bool) -> StoppingServer:
    """The uvicorn server of ``app`` (on the asyncio loop, no websockets, uvicorn's own lines only with
    ``debug``)."""
    _log_to_stderr(debug)
    config = uvicorn.Config(
        cast("ASGIApplication", app),
        loop="asyncio",
        ws="none",
        lifespan="on",
        log_level="info" if debug else "warning",
        access_log=debug,
        timeout_graceful_shutdown=GRACEFUL_STOP_S,
    )
    return StoppingServer(config, runs)


def _log_to_stderr(debug: bool) -> None:
    """The server's own warnings (a run that failed unexpectedly, a close that failed) on stderr."""
    log = logging.getLogger("massgen_cli.serve")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("massgen serve: %(levelname)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.DEBUG if debug else logging.WARNING)


def _announce(settings: ServerSettings, listener: socket.socket) -> None:
    """The line that says where the server is, what it serves and how (stderr)."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    for model in settings.models:
        for warning in model.loaded.warnings:
            console.print(f"[yellow]warning:[/] {escape(model.loaded.path.name)}: {escape(warning)}")
    host, port = listener.getsockname()[:2]
    where = f"[{host}]" if ":" in host else host
    models = ", ".join(settings.models.ids)
    access = "a bearer token required" if settings.token else "no token"
    if settings.tenants:
        access = f"{len(settings.tenants.tenants)} tenants, each with its token"
    hosts = "any host" if ANY_HOST in settings.hosts else "hosts " + ", ".join(sorted(settings.hosts))
    console.print(
        f"massgen serve: http://{where}:{port}/v1 · models {escape(models)} · "
        f"{settings.max_concurrent} turns at once, {settings.max_waiting} more may wait · {access} · "
        f"{escape(hosts)} · "
        f"state {settings.state_dir} · live view http://{where}:{port}/"
    )

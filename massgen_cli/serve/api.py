"""The server's Starlette app: ``POST /v1/chat/completions``, ``POST /v1/responses``, ``GET /v1/models``
(and one model), ``GET /health``; the doors of ``guard`` (Host, Origin, token) before them; every error
in OpenAI's shape. Its state (``app.state.runs``: the running turns, each a ``LiveRun`` one may subscribe
to) is what more routes (a page, a live feed of a run's events) build on."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from massgen_cli import __version__
from massgen_cli.serve.bounds import read_body, read_json
from massgen_cli.serve.chat_speaker import ChatSpeaker
from massgen_cli.serve.guard import LOCAL_NAMES, BearerCheck, HostCheck, owner_of, state_dir_of
from massgen_cli.serve.models import ServedModels
from massgen_cli.serve.replies import TurnReply
from massgen_cli.serve.response_store import ResponseStore
from massgen_cli.serve.responses_speaker import ResponsesSpeaker
from massgen_cli.serve.responses_wire import read_responses
from massgen_cli.serve.runs import LiveRun, Runs
from massgen_cli.serve.tenants import Tenants
from massgen_cli.serve.web import web_routes
from massgen_cli.serve.wire import ApiError, Reply, RequestLimits, error_body, read_chat

MAX_BODY_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ServerSettings:
    """What a server serves and how: its configs, state folder, token and limits, and the ``Host``
    names it answers to."""

    models: ServedModels
    state_dir: Path
    token: str | None = None
    max_concurrent: int = 4
    max_waiting: int = 64
    hosts: frozenset[str] = LOCAL_NAMES
    limits: RequestLimits = field(default_factory=RequestLimits)
    tenants: Tenants | None = None
    """``--keys``' tenants, each with its own token and state folder (None: one owner, ``token``)."""
    questions: bool = True
    """Whether the live view's page may ask questions (``massgen --web`` serves its one run only)."""


def create_app(settings: ServerSettings) -> Starlette:
    """The app; ``app.state.runs`` holds its turns, ``app.state.settings`` what it serves."""
    routes = [
        Route("/health", health),
        Route("/v1/models", list_models),
        Route("/v1/models/{model:path}", one_model),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        *web_routes(),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(HostCheck, names=settings.hosts),
            Middleware(BearerCheck, token=settings.token, tenants=settings.tenants),
        ],
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, Exception: _internal_error},
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.runs = Runs(settings.max_concurrent, settings.max_waiting)
    app.state.started = int(time.time())
    app.state.responses = ResponseStore()
    return app


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    runs: Runs = app.state.runs
    await runs.close()


async def health(request: Request) -> Response:
    """Whether the server answers, and how many turns run and wait (no token needed)."""
    runs: Runs = request.app.state.runs
    turns = {"running": len(runs.live), "waiting": runs.waiting}
    return JSONResponse({"status": "ok", "service": "massgen-cli", "version": __version__, "turns": turns})


async def list_models(request: Request) -> Response:
    settings: ServerSettings = request.app.state.settings
    listed = [_model(request, model_id) for model_id in settings.models.ids]
    return JSONResponse({"object": "list", "data": listed})


async def one_model(request: Request) -> Response:
    settings: ServerSettings = request.app.state.settings
    name = request.path_params["model"]
    if settings.models.find(name) is None:
        raise _unknown_model(name, settings.models)
    return JSONResponse(_model(request, name))


def _model(request: Request, model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": request.app.state.started, "owned_by": "massgen"}


async def chat_completions(request: Request) -> Response:
    """Run the turn the request asks for (see ``replies``); a bad request is answered at once."""
    settings: ServerSettings = request.app.state.settings
    ask = read_chat(await _json_body(request), settings.limits)
    served = settings.models.find(ask.model)
    if served is None:
        raise _unknown_model(ask.model, settings.models)
    run = LiveRun(ask, served, state_dir_of(request), owner=owner_of(request))
    return TurnReply(request.app.state.runs, run, ChatSpeaker(ask, Reply.new(ask.model, run.id)))


async def responses(request: Request) -> Response:
    """The Responses API: the turn its input asks for, answered as a response (see ``responses_speaker``)."""
    settings: ServerSettings = request.app.state.settings
    store: ResponseStore = request.app.state.responses
    owner = owner_of(request)
    asked = read_responses(await _json_body(request), store, owner, settings.limits)
    served = settings.models.find(asked.ask.model)
    if served is None:
        raise _unknown_model(asked.ask.model, settings.models)
    run = LiveRun(asked.ask, served, state_dir_of(request), owner=owner)
    return TurnReply(request.app.state.runs, run, ResponsesSpeaker(asked, run.id, store, owner))


def _unknown_model(name: str, models: ServedModels) -> ApiError:
    served = ", ".join(models.ids)
    message = f"the model '{name}' does not exist; this server serves: {served}"
    return ApiError(404, message, code="model_not_found", param="model")


async def _json_body(request: Request) -> Any:
    """The request's JSON body, read up to ``MAX_BODY_BYTES``."""
    return read_json(await read_body(request, MAX_BODY_BYTES))


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return JSONResponse(error.body(), error.status)


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own errors (an unknown path, a method not allowed) in OpenAI's shape (OpenAI says an
    unknown path is an ``invalid_request_error`` too)."""
    assert isinstance(error, HTTPException)
    body = error_body(f"{request.method} {request.url.path}: {error.detail}", "invalid_request_error")
    return JSONResponse(body, error.status_code, headers=error.headers)


async def _internal_error(request: Request, error: Exception) -> Response:
    return JSONResponse(error_body(f"internal error: {type(error).__name__}"), 500)

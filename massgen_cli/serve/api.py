"""The server's Starlette app: ``POST /v1/chat/completions``, ``GET /v1/models`` (and one model),
``GET /health``; the bearer token check on ``/v1/``; every error in OpenAI's shape. Its state
(``app.state.runs``: the running turns, each a ``LiveRun`` one may subscribe to) is what more routes
(a page, a live feed of a run's events) build on."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from massgen_cli import __version__
from massgen_cli.serve.models import ServedModels
from massgen_cli.serve.replies import TurnReply
from massgen_cli.serve.runs import LiveRun, Runs
from massgen_cli.serve.web import TOKEN_COOKIE, web_routes
from massgen_cli.serve.wire import ApiError, bad_request, error_body, read_chat

MAX_BODY_BYTES = 8 * 1024 * 1024
PROTECTED_PREFIX = "/v1/"
WEB_PREFIXES = ("/runs", "/web/")


@dataclass(frozen=True)
class ServerSettings:
    """What a server serves and how: its configs, state folder, token and limits."""

    models: ServedModels
    state_dir: Path
    token: str | None = None
    max_concurrent: int = 4
    max_waiting: int = 64


def create_app(settings: ServerSettings) -> Starlette:
    """The app; ``app.state.runs`` holds its turns, ``app.state.settings`` what it serves."""
    routes = [
        Route("/health", health),
        Route("/v1/models", list_models),
        Route("/v1/models/{model:path}", one_model),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        *web_routes(),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(BearerCheck, token=settings.token)],
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, Exception: _internal_error},
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.runs = Runs(settings.max_concurrent, settings.max_waiting)
    app.state.started = int(time.time())
    return app


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    runs: Runs = app.state.runs
    runs.cancel_all()
    runs.executor.shutdown(wait=True)


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
    ask = read_chat(await _json_body(request))
    served = settings.models.find(ask.model)
    if served is None:
        raise _unknown_model(ask.model, settings.models)
    return TurnReply(request.app.state.runs, LiveRun(ask, served, settings.state_dir))


def _unknown_model(name: str, models: ServedModels) -> ApiError:
    served = ", ".join(models.ids)
    message = f"the model '{name}' does not exist; this server serves: {served}"
    return ApiError(404, message, code="model_not_found", param="model")


async def _json_body(request: Request) -> Any:
    """The request's JSON body, read up to ``MAX_BODY_BYTES``."""
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > MAX_BODY_BYTES:
            raise ApiError(413, f"the request body is over {MAX_BODY_BYTES // 2**20} MB", code="too_large")
    try:
        return json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError):
        raise bad_request("the body of the request is not valid JSON", code="invalid_json") from None


class BearerCheck:
    """When the server has a token, every path under ``/v1/`` needs ``Authorization: Bearer <token>``;
    the web view's paths (``/``, ``/runs``, ``/web/``) take it from that header or the page's cookie,
    and ``/`` from ``?token=`` too (which the page keeps in the cookie)."""

    def __init__(self, app: ASGIApp, token: str | None):
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._refused(scope):
            body = error_body(
                "a valid API key is required: send it as 'Authorization: Bearer <token>'",
                "invalid_request_error",
                "invalid_api_key",
            )
            await JSONResponse(body, 401, headers={"www-authenticate": "Bearer"})(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refused(self, scope: Scope) -> bool:
        if not self.token or scope["type"] != "http":
            return False
        path = scope["path"]
        web = path == "/" or path.startswith(WEB_PREFIXES)
        if not (web or path.startswith(PROTECTED_PREFIX)):
            return False
        request = Request(scope)
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self._matches(given.strip()):
            return False
        if web and self._matches(request.cookies.get(TOKEN_COOKIE, "")):
            return False
        return not (path == "/" and self._matches(request.query_params.get("token", "")))

    def _matches(self, given: str) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), (self.token or "").encode())


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return JSONResponse(error.body(), error.status)


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own errors (an unknown path, a method not allowed) in OpenAI's shape."""
    assert isinstance(error, HTTPException)
    kind = "not_found_error" if error.status_code == 404 else "invalid_request_error"
    body = error_body(f"{request.method} {request.url.path}: {error.detail}", kind)
    return JSONResponse(body, error.status_code, headers=error.headers)


async def _internal_error(request: Request, error: Exception) -> Response:
    return JSONResponse(error_body(f"internal error: {type(error).__name__}"), 500)

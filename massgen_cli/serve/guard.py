"""The server's doors, checked before any route: the ``Host`` a request names must be one the server
answers to (a page of another site that re-points its own name at 127.0.0.1, DNS rebinding, names its
own), a browser's request from another origin is refused, and the token (when there is one) is required.
Each refusal is an error in OpenAI's shape."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from massgen_cli.serve.tenants import Tenant, Tenants
from massgen_cli.serve.wire import error_body

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""The names this machine's own address goes by: a server answers to them wherever it listens."""
ANY_HOST = "*"
"""``--allowed-host '*'``: any ``Host`` (the token still guards the server)."""
PROTECTED_PREFIX = "/v1/"
WEB_PREFIXES = ("/runs", "/web/")
OPEN_PATHS = ("/health",)
"""Paths any origin may read (no run, no change): whether the server answers."""


def host_name(host: str) -> str:
    """``host`` as a ``Host`` header names it, without its port: ``[::1]`` for ``::1``, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    if host.count(":") == 1:
        return host.split(":")[0]
    return f"[{host}]" if ":" in host else host


def answered_names(bound_to: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server bound to ``bound_to`` answers: this machine's own, that address, and
    each of ``allowed`` (``--allowed-host``)."""
    return LOCAL_NAMES | {host_name(bound_to)} | {host_name(name) for name in allowed}


def cookie_name(scope: Scope) -> str:
    """The token's cookie: one per port, since a browser sends 127.0.0.1's cookies to each of its ports
    (two servers on one machine never overwrite each other's)."""
    server = scope.get("server")
    return f"massgen_token_{server[1]}" if server else "massgen_token"


async def _refuse(status: int, message: str, code: str, scope: Scope, receive: Receive, send: Send) -> None:
    headers = {"www-authenticate": "Bearer"} if status == 401 else None
    body = error_body(message, "invalid_request_error", code)
    await JSONResponse(body, status, headers=headers)(scope, receive, send)


class HostCheck:
    """Only requests whose ``Host`` is one of ``names`` (421 otherwise), and from a browser only those
    of the server's own origin (403 otherwise: an ``Origin`` header naming another site), ``/health``
    aside."""

    def __init__(self, app: ASGIApp, names: frozenset[str]):
        self.app, self.names = app, names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = request.headers.get("host", "")
        if ANY_HOST not in self.names and host_name(host) not in self.names:
            message = f"this server does not answer to the host {host!r}: name it with --allowed-host"
            await _refuse(421, message, "host_not_allowed", scope, receive, send)
            return
        origin = request.headers.get("origin")
        if origin is not None and scope["path"] not in OPEN_PATHS and not _same_origin(origin, host):
            message = f"requests from the origin {origin!r} are refused: only this server's own pages may ask"
            await _refuse(403, message, "origin_not_allowed", scope, receive, send)
            return
        await self.app(scope, receive, send)


def _same_origin(origin: str, host: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:  # no address at all ("http://[::1")
        return False
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.strip().lower()


class BearerCheck:
    """When the server has a token (or tenants, each with its own), every path under ``/v1/`` needs
    ``Authorization: Bearer <token>``; the web view's paths (``/``, ``/runs``, ``/web/``) take it from
    that header, the page's cookie or ``?token=`` (which the page keeps in the cookie). The tenant a
    token is goes with the request (``tenant_of``)."""

    def __init__(self, app: ASGIApp, token: str | None, tenants: Tenants | None = None):
        self.app, self.token, self.tenants = app, token, tenants

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (self.token or self.tenants) and _guarded(scope["path"]):
            valid = [token for token in _given(scope) if is_token(token, self.token, self.tenants)]
            if not valid:
                message = "a valid token is required: send it as 'Authorization: Bearer <token>'"
                await _refuse(401, message, "invalid_api_key", scope, receive, send)
                return
            tenant = self.tenants.find(valid[0]) if self.tenants else None
            scope.setdefault("state", {})[TENANT_KEY] = tenant
        await self.app(scope, receive, send)


def is_token(given: str, token: str | None, tenants: Tenants | None) -> bool:
    """Whether ``given`` is the server's ``token`` or a tenant's (compared in constant time)."""
    if not given:
        return False
    if token and secrets.compare_digest(given.encode(), token.encode()):
        return True
    return tenants is not None and tenants.find(given) is not None


TENANT_KEY = "massgen_tenant"


def tenant_of(request: Request) -> Tenant | None:
    """The tenant whose token the request carries (None: the server has no tenants)."""
    tenant: Tenant | None = request.scope.get("state", {}).get(TENANT_KEY)
    return tenant


def owner_of(request: Request) -> str | None:
    """The name of the tenant the request is of (None: the server has no tenants)."""
    tenant = tenant_of(request)
    return tenant.name if tenant else None


def state_dir_of(request: Request) -> Path:
    """The state folder of the request's tenant (the server's, without tenants)."""
    tenant = tenant_of(request)
    folder: Path = tenant.state_dir if tenant else request.app.state.settings.state_dir
    return folder


def _guarded(path: str) -> bool:
    return path == "/" or path.startswith((*WEB_PREFIXES, PROTECTED_PREFIX))


def _given(scope: Scope) -> list[str]:
    """The tokens a request carries: its bearer token, and on the web view's paths its cookie and
    ``?token=``."""
    request = Request(scope)
    scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
    given = [bearer.strip() if scheme.lower() == "bearer" else ""]
    if not scope["path"].startswith(PROTECTED_PREFIX):
        given += [request.cookies.get(cookie_name(scope), ""), request.query_params.get("token", "")]
    return given

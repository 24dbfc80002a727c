"""The Qdrant client as the index uses it: a failure to reach the server becomes one clear
``MemoryStoreError`` line, whichever call met it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from massgen_cli.errors import MemoryStoreError, StoreUnreachable


def unreachable(location: str, error: BaseException) -> MemoryStoreError:
    """The line for a call the server failed: ``StoreUnreachable`` when it was not reached at all."""
    import httpx
    from qdrant_client.http.exceptions import UnexpectedResponse

    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    answered = isinstance(error, UnexpectedResponse | httpx.HTTPStatusError)
    return (MemoryStoreError if answered else StoreUnreachable)(
        f"could not use the Qdrant memory server at {location}: {detail}. Check that the server runs "
        "(`docker compose -f docker-compose.qdrant.yml up -d`) and persistent_memory.qdrant's url, host "
        "and port"
    )


def _transport_errors() -> tuple[type[BaseException], ...]:
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    return (ResponseHandlingException, UnexpectedResponse, httpx.HTTPError, ConnectionError, TimeoutError)


class GuardedClient:
    """Every method of ``client``, with the server's failures said as ``MemoryStoreError``."""

    def __init__(self, client: Any, location: str):
        self.client = client
        self.location = location
        self.failures = _transport_errors()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)
        if not callable(method):
            return method
        return self._guarded(method)

    def _guarded(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except self.failures as error:
                raise unreachable(self.location, error) from error

        return call


def client_location(client: Any) -> str:
    """Where a client points, for messages: the server's address, or ``in-process`` for local mode."""
    inner = getattr(client, "_client", None)
    rest_uri = getattr(inner, "rest_uri", None)
    return str(rest_uri) if rest_uri else "in-process"

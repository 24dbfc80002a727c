"""A Qdrant "server" inside the test's process: qdrant-client's in-process engine (local mode, the same
API as a server) behind a client that hands it one request at a time. A server applies each request
atomically; the in-process engine does not guard itself against threads (an upsert while a scroll
computes its filter mask fails), so the lock plays the server's part. Requests from several threads
still interleave between one another, as they would on a server."""

from __future__ import annotations

import functools
import threading
from typing import Any

from qdrant_client import QdrantClient


class OneRequestAtATime:
    """The engine's methods, each called under one lock."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.engine, name)
        if not callable(found):
            return found

        @functools.wraps(found)
        def request(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return found(*args, **kwargs)

        return request


def in_process_server(path: str | None = None) -> QdrantClient:
    """A client of a new in-process Qdrant (in memory, or kept in the folder ``path``)."""
    client = QdrantClient(path=path) if path else QdrantClient(location=":memory:")
    client._client = OneRequestAtATime(client._client)  # the client hands every call to its engine
    return client

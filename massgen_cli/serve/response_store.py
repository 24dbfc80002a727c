"""The responses a server answered, kept so a later request may go on from one
(``previous_response_id``): the session it ran in and the conversation it read and said, by tenant and
response id. Kept in memory, the newest ``MAX_KEPT`` of them: a server that restarts forgets them (the
sessions stay, and ``session`` continues one)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

MAX_KEPT = 1000


@dataclass(frozen=True)
class StoredResponse:
    """A response's session and its conversation: what it read, then what it said (its answer, or its
    calls of the client's tools)."""

    session_id: str
    messages: tuple[dict[str, Any], ...]


class ResponseStore:
    """The newest ``limit`` responses, by tenant (None: the server has none) and id."""

    def __init__(self, limit: int = MAX_KEPT):
        self.limit = limit
        self._kept: OrderedDict[tuple[str | None, str], StoredResponse] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, owner: str | None, response_id: str, stored: StoredResponse) -> None:
        with self._lock:
            self._kept[(owner, response_id)] = stored
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def get(self, owner: str | None, response_id: str) -> StoredResponse | None:
        with self._lock:
            return self._kept.get((owner, response_id))

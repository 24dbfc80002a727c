"""Sessions on a Qdrant server: what a session needs to continue on any machine (its record, with the
turn counter, and the files its parts keep) as a payload point beside the memory index, and a lease
that holds the session for one process at a time.

Qdrant has no locks. The lease is a point per session naming its holder and when it expires: a claim
writes it ``insert_only`` (of two processes claiming a free session at once, exactly one point is
written, and the other reads back a holder that is not itself), takes over an expired one by deleting
it only while it still names the old holder, and renews it on every save. Its limits: a process that
dies keeps its session held until the lease expires (``LEASE_SECONDS`` after its last save), and a
process that saves nothing for longer than that (an idle interactive session) loses the hold to a
process on another machine that asks for it."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError, UsageError
from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.qdrant.base import require_version
from massgen_cli.memory.longterm.store.qdrant.client import GuardedClient, client_location
from massgen_cli.memory.longterm.store.qdrant.filters import equals
from massgen_cli.memory.longterm.store.qdrant.points import point_id
from massgen_cli.session_copies import RECORD_FILE, ServedCopy, folder_files, local_turns

LEASE_SECONDS = 3600.0


class QdrantSessions:
    """The sessions of one collection on a Qdrant server (``<collection>_sessions``)."""

    def __init__(self, client: Any, collection: str):
        from qdrant_client import models

        self.client = GuardedClient(client, client_location(client))
        self.name = f"{collection}_sessions"
        self.holder = uuid.uuid4().hex
        self.claimed: set[str] = set()
        require_version(self.client)
        if not self.client.collection_exists(self.name):
            try:
                self.client.create_collection(self.name, vectors_config={})
            except (ValueError, MemoryStoreError):
                if not self.client.collection_exists(self.name):
                    raise
            with warnings.catch_warnings():  # local mode says payload indexes do nothing there
                warnings.simplefilter("ignore", UserWarning)
                self.client.create_payload_index(self.name, "holder", models.PayloadSchemaType.KEYWORD)

    def where(self) -> str:
        return f"the memory server's session collection {self.name}"

    def claim(self, session_id: str) -> None:
        """Hold ``session_id`` for this process on every machine; a ``UsageError`` when another has it."""
        from qdrant_client import models

        lease = self._lease(session_id)
        if lease is not None and lease["holder"] != self.holder:
            if lease["expires"] > time.time():
                raise _in_use(session_id)
            self.client.delete(self.name, _lease_of(session_id, lease["holder"]), wait=True)
        payload = {
            "kind": "lease",
            "session_id": session_id,
            "holder": self.holder,
            "expires": time.time() + LEASE_SECONDS,
        }
        self._put(point_id("lease", session_id), payload, update_mode=models.UpdateMode.INSERT_ONLY)
        taken = self._lease(session_id)
        if taken is None or taken["holder"] != self.holder:
            raise _in_use(session_id)
        self.claimed.add(session_id)

    def release(self, session_id: str) -> None:
        if session_id in self.claimed:
            self.claimed.discard(session_id)
            with contextlib.suppress(MemoryStoreError):  # the lease then expires on its own
                self.client.delete(self.name, _lease_of(session_id, self.holder), wait=True)

    def copy(self, session_id: str) -> ServedCopy | None:
        """The server's copy of the session (None when it keeps none)."""
        found = self.client.retrieve(self.name, [point_id("session", session_id)], with_payload=True)
        if not found:
            return None
        payload = found[0].payload or {}
        return ServedCopy(int(payload.get("turns_started", 0)), json.loads(payload.get("state") or "{}"))

    def take_turn(self, session_id: str, first: int) -> int:
        """The session's next turn number, counted on the server: Qdrant has no atomic increment, so the
        number is read and written by the one process whose lease holds the session."""
        served = self.copy(session_id)
        turn = served.turns + 1 if served is not None else first
        if served is None:
            payload = {"kind": "session", "session_id": session_id, "state": "{}", "record": None}
            self._put(point_id("session", session_id), {**payload, "turns_started": turn})
        else:
            self.client.set_payload(
                self.name, {"turns_started": turn}, points=[point_id("session", session_id)]
            )
        return turn

    def push(self, session_id: str, directory: Path) -> None:
        """The session folder's files, as the server's copy (a copy that took more turns stays); the
        lease is renewed."""
        from qdrant_client import models

        files = folder_files(directory)
        turns = local_turns(directory)
        payload = {
            "kind": "session",
            "session_id": session_id,
            "turns_started": turns,
            "record": files.get(RECORD_FILE),
            "state": json.dumps(files),
            "updated_at": now_iso(),
        }
        not_ahead = models.Filter(
            must=[models.FieldCondition(key="turns_started", range=models.Range(lte=turns))]
        )
        self._put(point_id("session", session_id), payload, update_filter=not_ahead)
        if session_id in self.claimed:
            self.client.set_payload(
                self.name, {"expires": time.time() + LEASE_SECONDS}, points=_lease_of(session_id, self.holder)
            )

    def records(self) -> dict[str, dict[str, Any]]:
        """Every session's record the server keeps, by id."""
        from qdrant_client import models

        only_sessions = models.Filter(
            must=[models.FieldCondition(key="kind", match=models.MatchValue(value="session"))]
        )
        found: dict[str, dict[str, Any]] = {}
        offset = None
        while True:
            points, offset = self.client.scroll(
                self.name, scroll_filter=only_sessions, limit=256, offset=offset, with_payload=True
            )
            for point in points:
                payload = point.payload or {}
                if payload.get("record"):
                    found[str(payload["session_id"])] = json.loads(payload["record"])
            if offset is None:
                return found

    def delete(self, session_id: str) -> bool:
        found = self.client.retrieve(self.name, [point_id("session", session_id)], with_payload=False)
        self.client.delete(self.name, [point_id("session", session_id)], wait=True)
        return bool(found)

    def close(self) -> None:
        """Release every session this process holds (the client is shared and closed at exit)."""
        for session_id in list(self.claimed):
            self.release(session_id)

    def _lease(self, session_id: str) -> dict[str, Any] | None:
        found = self.client.retrieve(self.name, [point_id("lease", session_id)], with_payload=True)
        return dict(found[0].payload) if found else None

    def _put(self, identity: str, payload: dict[str, Any], **options: Any) -> None:
        from qdrant_client import models

        point = models.PointStruct(id=identity, vector={}, payload=payload)
        self.client.upsert(self.name, [point], wait=True, **options)


def _lease_of(session_id: str, holder: str) -> Any:
    """The session's lease point, only while ``holder`` holds it."""
    from qdrant_client import models

    identity = models.HasIdCondition(has_id=[point_id("lease", session_id)])
    return models.Filter(must=[identity, equals("holder", holder)])


def _in_use(session_id: str) -> UsageError:
    return UsageError(
        f"session {session_id} is in use by a massgen process on another machine (or another state "
        "folder) sharing this memory server; wait for it to finish, or use another --session"
    )

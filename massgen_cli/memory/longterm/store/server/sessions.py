"""Sessions on the server: what a session needs to continue on any machine (its record, with the turn
counter, and the files its parts keep: threads, shared entries, slots...) kept beside the memory index,
and a server-side lock, so two processes on two machines never take the same session (and turn) at once.

The session folder under the state folder stays the working copy: opening a session makes it and the
server's copy one (``session_copies.meet``), every save pushes the folder's files back; the server counts
the session's turns (``take_turn``)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from massgen_cli.errors import MemoryStoreError, UsageError
from massgen_cli.memory.longterm.store.index.schema import now_iso
from massgen_cli.memory.longterm.store.server.base import open_tables
from massgen_cli.session_copies import RECORD_FILE, ServedCopy, folder_files, local_turns


class ServerSessions:
    """The sessions of one collection on the server; each claimed session holds a lock on this
    connection until ``release`` (or until the process ends: the server frees it then)."""

    def __init__(self, connection_string: str, collection: str):
        self.tables, self.server = open_tables(connection_string, collection)
        self.claimed: set[str] = set()

    def where(self) -> str:
        return f"the memory server's session table {self.tables.sessions}"

    def claim(self, session_id: str) -> None:
        """Hold ``session_id`` for this process on every machine; a ``UsageError`` when another has it."""
        row = self.server.one("SELECT pg_try_advisory_lock(hashtext(%s))", (self._lock_name(session_id),))
        if not (row and row[0]):
            raise UsageError(
                f"session {session_id} is in use by a massgen process on another machine (or another state "
                "folder) sharing this memory server; wait for it to finish, or use another --session"
            )
        self.claimed.add(session_id)

    def release(self, session_id: str) -> None:
        if session_id in self.claimed:
            self.claimed.discard(session_id)
            with contextlib.suppress(MemoryStoreError):
                self.server.run("SELECT pg_advisory_unlock(hashtext(%s))", (self._lock_name(session_id),))

    def copy(self, session_id: str) -> ServedCopy | None:
        """The server's copy of the session (None when it keeps none)."""
        row = self.server.one(
            f"SELECT turns_started, state FROM {self.tables.sessions} WHERE session_id = %s", (session_id,)
        )
        return None if row is None else ServedCopy(int(row[0]), json.loads(row[1]))

    def take_turn(self, session_id: str, first: int) -> int:
        """The session's next turn number, counted here in one statement (``first`` for a session the
        server has no row of)."""
        row = self.server.one(
            f"INSERT INTO {self.tables.sessions} AS s (session_id, turns_started, updated_at) "
            "VALUES (%s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
            "turns_started = s.turns_started + 1, updated_at = excluded.updated_at RETURNING turns_started",
            (session_id, first, now_iso()),
        )
        assert row is not None
        return int(row[0])

    def push(self, session_id: str, directory: Path) -> None:
        """The session folder's files, as the server's copy (a copy that took more turns stays)."""
        files = folder_files(directory)
        self.server.run(
            f"INSERT INTO {self.tables.sessions} AS s (session_id, turns_started, record, state, updated_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
            "turns_started = excluded.turns_started, record = excluded.record, state = excluded.state, "
            "updated_at = excluded.updated_at WHERE s.turns_started <= excluded.turns_started",
            (session_id, local_turns(directory), files.get(RECORD_FILE), json.dumps(files), now_iso()),
        )

    def records(self) -> dict[str, dict[str, Any]]:
        """Every session's record the server keeps, by id."""
        rows = self.server.rows(
            f"SELECT session_id, record FROM {self.tables.sessions} WHERE record IS NOT NULL"
        )
        return {session_id: json.loads(record) for session_id, record in rows}

    def delete(self, session_id: str) -> bool:
        return bool(
            self.server.run(f"DELETE FROM {self.tables.sessions} WHERE session_id = %s", (session_id,))
        )

    def close(self) -> None:
        for session_id in list(self.claimed):
            self.release(session_id)
        self.server.close()

    def _lock_name(self, session_id: str) -> str:
        return f"massgen:{self.tables.collection}:session:{session_id}"

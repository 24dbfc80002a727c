"""The sessions ``massgen sessions list|show`` show: this state folder's, and those the config's memory
server keeps for every machine (a new machine's folder has none of its own, yet the server holds them
all). The server's copy of a session wins when it has begun more turns."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.session import SessionMirror, SessionRecord, list_sessions, read_session, record_from
from massgen_cli.state import resolve_state_dir


@dataclass(frozen=True)
class KeptSession:
    """A session's record, from the copy that has begun the most turns, and where it is kept: ``here``
    (this folder only), ``server`` (the memory server only: another machine's) or ``both``."""

    record: SessionRecord
    where: str


def kept_sessions(state_dir: Path | None, config: str | None) -> tuple[list[KeptSession], bool]:
    """Every session this folder or the memory server keeps, most recently used first, and whether a
    server was read (its place is then worth showing)."""
    folder = resolve_state_dir(state_dir)
    local = {record.session_id: record for record in list_sessions(folder)}
    served = _server_records(folder, config, local)
    if served is None:
        return [KeptSession(record, "here") for record in local.values()], False
    kept = [_kept(local.get(session_id), served.get(session_id)) for session_id in {*local, *served}]
    return sorted(kept, key=lambda session: session.record.updated_at, reverse=True), True


def kept_session(state_dir: Path | None, session_id: str, config: str | None) -> KeptSession:
    """One session's record, this folder's or the memory server's (whichever began more turns)."""
    folder = resolve_state_dir(state_dir)
    try:
        local: SessionRecord | None = read_session(folder, session_id)
    except UsageError:
        if config is None and last_config(folder, {}) is None:
            raise
        local = None
    served = _server_records(folder, config, {session_id: local} if local else {}) or {}
    if local is None and session_id not in served:
        raise UsageError(
            f"no session {session_id} here or on the memory server; `massgen sessions list` shows them"
        )
    return _kept(local, served.get(session_id))


def _kept(local: SessionRecord | None, served: SessionRecord | None) -> KeptSession:
    if served is None:
        assert local is not None
        return KeptSession(local, "here")
    if local is None:
        return KeptSession(served, "server")
    ahead = served if served.turns_started > local.turns_started else local
    return KeptSession(ahead, "both")


def _server_records(
    folder: Path, config: str | None, local: dict[str, SessionRecord]
) -> dict[str, SessionRecord] | None:
    """The records the memory server of ``config`` (else of the config this folder's latest session ran
    with) keeps, or None when there is no server; one line on stderr when it cannot be read."""
    chosen = config or last_config(folder, local)
    if chosen is None:
        return None
    from massgen_cli.compose import session_mirror
    from massgen_cli.config import load_config

    mirror, problem = session_mirror(load_config(chosen).config)
    if mirror is None:
        if problem:
            Console(stderr=True).print(f"[yellow]{problem}: this folder's sessions only[/]")
        return None
    try:
        return _records(mirror)
    except MassGenError as error:
        Console(stderr=True).print(f"[yellow]the memory server's sessions cannot be read ({error})[/]")
        return None
    finally:
        with contextlib.suppress(MassGenError):
            mirror.close()


def _records(mirror: SessionMirror) -> dict[str, SessionRecord]:
    found = {}
    for session_id, data in mirror.records().items():
        with contextlib.suppress(TypeError, ValueError, AttributeError):  # one damaged record hides no other
            found[session_id] = record_from(data)
    return found


def last_config(folder: Path, local: dict[str, SessionRecord] | None = None) -> str | None:
    """The config file the folder's most recently used session ran with, when it still exists."""
    records = local.values() if local else list_sessions(folder)
    for record in sorted(records, key=lambda record: record.updated_at, reverse=True):
        if record.config_path and Path(record.config_path).is_file():
            return record.config_path
    return None

"""Sessions: an id, a turn counter and the conversation so far, persisted under the state folder.

A session continues across runs: the turn counter and the history belong to the session, not to
the process. Interactive sessions are named ``session_<ts>``, single questions ``temp_<ts>``.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.session_copies import Claimed, SessionMirror, claim, described
from massgen_cli.state import read_json, timestamp, write_json

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

TurnStatus = Literal["answered", "failed", "cancelled"]


@dataclass
class Exchange:
    """One turn that ended: the question, the final answer (empty when it has none), and how it ended."""

    turn: int
    question: str
    answer: str
    winner: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    """The turn's tokens and cost, summed over its agents (``Usage.fields``): what every call spent, its
    failed and cancelled calls included."""
    status: TurnStatus = "answered"
    """Records written before failed and cancelled turns were kept hold answered turns only."""
    end_reason: str = ""
    conversation: int = 1
    """The conversation the turn belongs to: ``/reset`` starts the next one."""
    offline: bool = False
    """Taken while the memory server could not be reached (numbered here, then filed there)."""


@dataclass
class SessionRecord:
    """What is persisted of a session in ``session.json``."""

    session_id: str
    created_at: str
    updated_at: str
    turns_completed: int = 0
    turns_started: int = 0
    config_path: str | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    """Every turn that ended, answered or not, in order; ``/reset`` keeps them."""
    conversation: int = 1
    """The current conversation (``/reset`` starts a new one: the agents forget the earlier turns)."""
    log_folders: list[str] = field(default_factory=list)
    """The log folders of the runs that took turns in it (``massgen_logs/<name>``), oldest first."""
    lists_all_runs: bool = True
    """False for a record written before records listed log folders: the runs before are missing from
    ``log_folders``, and a scan of the run logs finds them."""
    offline_turns: list[int] = field(default_factory=list)
    """Turns numbered here while the memory server could not be reached, not yet filed there (see
    ``session_copies``)."""
    offline_since: str | None = None
    """When the first of ``offline_turns`` began (UTC): what the agents said since goes with them."""

    @property
    def turns_taken(self) -> int:
        """The turns that ended, answered, failed or cancelled (as ``sessions show`` counts them)."""
        return max(len(self.exchanges), self.turns_completed)


BUILT_CONFIG_FILE = "command_line_config.json"
"""Where a session started from the command line's agents (quick start) keeps the config they made."""


class Session:
    """A session on disk: ``<state>/sessions/<id>/session.json``, held by one process at a time (an
    exclusive lock on ``.lock`` until ``close``), so two runs never take the same turn number."""

    def __init__(self, directory: Path, record: SessionRecord, *, saved: bool = True):
        self.directory = directory
        self.record = record
        self.saved = saved
        self.lock: IO[str] | None = None
        self.created = False
        """Created by this process (not continued): removed again at ``close`` if no turn began."""
        self.mirror: SessionMirror | None = None
        self.mirror_problem: str | None = None
        """Why the mirror stopped being written, or what it filed (said once by the caller, then cleared)."""
        self.offline = False
        """The config keeps the session on a memory server that cannot be reached: turns are numbered here."""
        self.filed_notice: str | None = None
        """What was filed on the server when this run reached it (said once by the caller)."""
        self.refiled: dict[int, int] = {}
        """This folder's offline turns the server numbered anew when it was reached, old number to new:
        their memory records are re-filed under the new ones."""

    def close(self) -> None:
        """Let other processes continue the session. A session this process created and began no turn in
        is removed first: a run refused before its first turn (a missing key, a bad part) leaves nothing."""
        if self.lock is None:
            return
        if self.created and not self.record.turns_started:
            shutil.rmtree(self.directory, ignore_errors=True)
            self._mirrored(lambda mirror: mirror.delete(self.id))
        else:
            self.push()
        self._mirrored(lambda mirror: mirror.release(self.id))
        release(self.lock)
        self.lock = None

    @property
    def id(self) -> str:
        return self.record.session_id

    @property
    def next_turn(self) -> int:
        return max(self.record.turns_started, self.record.turns_completed) + 1

    def begin_turn(self) -> int:
        """Take the next turn number (a failed or cancelled turn keeps its number) and persist it: the
        memory server that keeps the session counts it; when it cannot be reached, it is numbered here
        and kept as offline."""
        taken: list[int] = []
        self._mirrored(lambda mirror: taken.append(mirror.take_turn(self.id, self.next_turn)))
        turn = taken[0] if taken else self.next_turn
        if not taken and self.offline and self.saved:
            self.record.offline_turns.append(turn)
            self.record.offline_since = self.record.offline_since or datetime.now(UTC).isoformat()
        self.record.turns_started = turn
        self.save()
        return turn

    def numbered_offline(self, turn: int) -> bool:
        """Whether ``turn`` was numbered here, offline, and waits to be filed on the memory server."""
        return turn in self.record.offline_turns

    def history(self) -> list[Exchange]:
        return list(self.record.exchanges)

    def record_turn(self, exchange: Exchange) -> None:
        """Keep how a turn ended (answered, failed or cancelled) in the current conversation, and persist."""
        exchange.conversation = self.record.conversation
        exchange.offline = exchange.offline or self.numbered_offline(exchange.turn)
        self.record.exchanges.append(exchange)
        if exchange.status == "answered":
            self.record.turns_completed = max(self.record.turns_completed, exchange.turn)
        self.save()

    def new_conversation(self) -> None:
        """Start a new conversation (``/reset``); the turns so far, what they spent and the turn counter
        are kept."""
        self.record.conversation += 1
        self.save()

    def add_log_folder(self, folder: Path) -> None:
        """List a run's log folder in the record (once), and persist."""
        if folder.name not in self.record.log_folders:
            self.record.log_folders.append(folder.name)
            self.save()

    def save(self) -> None:
        if not self.saved:  # a run whose state folder cannot be written reads the session, never writes it
            return
        self.record.updated_at = datetime.now().isoformat(timespec="seconds")
        write_json(self.directory / "session.json", asdict(self.record))
        self.push()

    def keep_built_config(self, document: dict[str, Any]) -> None:
        """The config the command line's agents made (quick start), kept beside the record once, so
        ``--continue`` runs the same agents without the flags again."""
        path = self.directory / BUILT_CONFIG_FILE
        if self.saved and not path.exists():
            write_json(path, document)

    def push(self) -> None:
        """The session's files to its mirror (what another machine continues from)."""
        if self.saved:
            self._mirrored(lambda mirror: mirror.push(self.id, self.directory))

    def _mirrored(self, action: Any) -> None:
        """Run ``action`` on the mirror; a mirror that fails is said once and no longer used: the session
        goes on here, its turns numbered offline."""
        if self.mirror is None:
            return
        try:
            action(self.mirror)
        except MassGenError as error:
            self.go_offline(f" ({self.mirror.where()}: {error})")

    def go_offline(self, why: str = "") -> None:
        """The memory server that keeps the session cannot be reached (``why``, in parentheses, or nothing
        when another line says it): said once, with what is kept where."""
        self.mirror, self.offline = None, True
        self.mirror_problem = (
            f"the memory server cannot be reached{why}. Session {self.id} goes on in {self.directory}; "
            "the turns it takes meanwhile are marked offline and filed there with the next free number "
            "by the first run that reaches it"
        )


def sessions_root(state_dir: Path) -> Path:
    return state_dir / "sessions"


def open_session(
    state_dir: Path,
    session_id: str | None,
    *,
    interactive: bool,
    config_path: str | None,
    saved: bool = True,
    mirror: SessionMirror | None = None,
    unreachable: bool = False,
) -> Session:
    """Continue ``session_id`` (created if missing), or start a new uniquely named session. An unsaved
    session (``saved=False``) reads what is on disk and writes nothing, not even its lock. With a
    ``mirror`` the session is also held there (on every machine), and this folder's copy and the one
    there are made one (``session_copies.meet``); ``unreachable``: the config keeps sessions on a memory
    server that cannot be reached, so turns are numbered here, offline, until a run reaches it."""
    if session_id is not None:
        check_session_id(session_id)
        directory = sessions_root(state_dir) / session_id
        if not saved:
            return _load_or_create(directory, session_id, config_path, saved=False)
        made = _make_folder(directory)
        lock = _hold(directory, session_id)
        try:
            claimed = claim(mirror, session_id, directory, unreachable)
            session = _attach(_load_or_create(directory, session_id, config_path, made=made), lock, claimed)
        except BaseException:
            if mirror is not None:
                mirror.release(session_id)
            lock.close()
            raise
        return session
    prefix = "session" if interactive else "temp"
    if not saved:
        new_id = f"{prefix}_{timestamp()}"
        return _create(sessions_root(state_dir) / new_id, new_id, config_path, saved=False)
    while True:
        new_id = f"{prefix}_{timestamp()}"
        directory = sessions_root(state_dir) / new_id
        try:
            directory.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            continue
        lock = _hold(directory, new_id)
        claimed = claim(mirror, new_id, directory, unreachable)
        return _attach(_create(directory, new_id, config_path, made=True), lock, claimed)


def check_session_id(session_id: str) -> None:
    """A ``UsageError`` unless ``session_id`` can name a session."""
    if not _SESSION_ID.match(session_id):
        raise UsageError(
            f"session id {session_id!r} must start with a letter or digit and use only letters, digits, "
            "'_', '-' and '.' (at most 128 characters)"
        )


def _make_folder(directory: Path) -> bool:
    """Make a named session's folder; whether this process made it. Only then may a refused run remove
    it: a folder that was there already may hold threads, shared memory or memory files without a
    ``session.json``."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    try:
        directory.mkdir(exist_ok=False)
    except FileExistsError:
        return False
    return True


def _hold(
    directory: Path, session_id: str, advice: str = "wait for it to finish, or use another --session"
) -> IO[str]:
    """The session's lock, taken for this process; a ``UsageError`` naming the process that has it."""
    lock = (directory / ".lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        lock.close()
        raise UsageError(f"session {session_id} is in use by massgen process {holder}; {advice}") from None
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    return lock


def hold_session(state_dir: Path, session_id: str) -> IO[str]:
    """An existing session's lock, taken for this process (to remove the session): a ``UsageError`` when
    there is no such session or a running massgen process holds it."""
    if not _SESSION_ID.match(session_id):
        raise UsageError(f"{session_id!r} is not a session id")
    directory = sessions_root(state_dir) / session_id
    if not directory.is_dir():
        raise UsageError(f"no session {session_id} under {state_dir}; `massgen sessions list` shows them")
    return _hold(directory, session_id, "it is kept; remove it once that run has ended")


def release(lock: IO[str]) -> None:
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()


def _attach(session: Session, lock: IO[str], claimed: Claimed) -> Session:
    session.lock = lock
    session.mirror = claimed.mirror
    if claimed.unreachable is not None:
        session.go_offline(claimed.unreachable)
    elif claimed.refiled and claimed.mirror is not None:
        session.refiled = claimed.refiled
        where = claimed.mirror.where()
        session.filed_notice = (
            f"session {session.id}: {described(claimed.refiled)} ({where}); their memory records follow"
        )
    session.push()
    return session


def _load_or_create(
    directory: Path, session_id: str, config_path: str | None, *, saved: bool = True, made: bool = False
) -> Session:
    path = directory / "session.json"
    if not path.is_file():
        if saved:
            directory.mkdir(parents=True, exist_ok=True)
        return _create(directory, session_id, config_path, saved=saved, made=made)
    return Session(directory, record_from(read_json(path, "session record")), saved=saved)


def record_from(data: dict[str, Any]) -> SessionRecord:
    """A session record from its JSON (``TypeError`` or ``ValueError`` when it is not one)."""
    data = dict(data)
    data["exchanges"] = [Exchange(**item) for item in data.get("exchanges", [])]
    data.setdefault("lists_all_runs", "log_folders" in data)  # older records did not list log folders
    return SessionRecord(**data)


def _create(
    directory: Path, session_id: str, config_path: str | None, *, saved: bool = True, made: bool = False
) -> Session:
    """A new record for ``session_id``; ``made`` when this process made its folder (see ``close``)."""
    now = datetime.now().isoformat(timespec="seconds")
    session = Session(directory, SessionRecord(session_id, now, now, config_path=config_path), saved=saved)
    session.created = made and saved
    session.save()
    return session


def read_session(state_dir: Path, session_id: str) -> SessionRecord:
    """A session's record, read only; a ``UsageError`` naming the sessions there are when it is unknown."""
    if not _SESSION_ID.match(session_id):
        raise UsageError(f"{session_id!r} is not a session id")
    path = sessions_root(state_dir) / session_id / "session.json"
    if not path.is_file():
        raise UsageError(f"no session {session_id} under {state_dir}; `massgen sessions list` shows them")
    return _load_or_create(path.parent, session_id, None, saved=False).record


def list_sessions(state_dir: Path) -> list[SessionRecord]:
    """Every session under the state folder, most recently used first (two used within the same second
    in the order their records were written)."""
    found = []
    for path in sessions_root(state_dir).glob("*/session.json"):
        try:
            session = _load_or_create(path.parent, path.parent.name, None)
            found.append((session.record.updated_at, path.stat().st_mtime_ns, session.record))
        except (MassGenError, OSError, ValueError, TypeError):
            continue  # one damaged session does not hide the others
    return [record for *_, record in sorted(found, key=lambda item: item[:2], reverse=True)]

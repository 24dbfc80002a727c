"""``massgen sessions delete|prune``: remove sessions with what belongs to them, without Typer.

A session owns its folder under ``<state>/sessions/`` (its record, lock, threads, shared memory, the ledger
of memory files), the run log folders whose attempts it ran and its report (``logs report SESSION``). Its
long-term memories go only when asked: later runs learn from them, and a memory recorded in several sessions
stays while one of them remains.
A session that a running massgen holds (its lock) is never removed.
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.markup import escape

from massgen_cli.cli.memory_commands import confirm, open_store
from massgen_cli.cli.sessions_kept import last_config
from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.session import (
    SessionRecord,
    check_session_id,
    hold_session,
    list_sessions,
    read_session,
    release,
    sessions_root,
)
from massgen_cli.state import resolve_state_dir

AGE = re.compile(r"^(\d+)([hdw])$")
AGE_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
TEMP_PREFIX = "temp_"
"""What the sessions of single questions asked without ``--session`` are named."""


@dataclass(frozen=True)
class Removed:
    """What removing one session took away."""

    session_id: str
    folder: Path
    files: list[str]
    log_folders: list[Path]
    report: Path | None = None

    def describe(self) -> str:
        parts = [f"its folder {self.folder} ({', '.join(self.files) or 'empty'})"]
        parts.append(f"{len(self.log_folders)} run log folder(s)")
        if self.report is not None:
            parts.append(f"its report {self.report}")
        return f"deleted session {self.session_id}: " + ", ".join(parts)


def parse_age(text: str) -> timedelta:
    """``12h``, ``7d`` or ``2w`` as a duration."""
    match = AGE.match(text.strip().lower())
    if match is None:
        raise UsageError(f"--older-than {text!r}: give a number and a unit, h, d or w (12h, 7d, 2w)")
    return int(match[1]) * AGE_UNITS[match[2]]


def delete_sessions(
    state_dir: Path | None, session_ids: list[str], *, memories: bool, config: str | None, yes: bool
) -> int:
    """Delete each session, here and on the memory server that keeps it (that of ``config``, else of
    the configs the sessions and this folder last ran with): all or none, as an unknown one, or one a
    running massgen holds on any machine, stops the command before anything is deleted; with
    ``memories``, also the memories recorded only in them."""
    folder = resolve_state_dir(state_dir)
    ids = list(dict.fromkeys(session_ids))
    here = [session_id for session_id in ids if (sessions_root(folder) / session_id).is_dir()]
    servers = _servers_keeping(folder, ids, config)
    try:
        _check_known(folder, [session_id for session_id in ids if session_id not in here], servers)
        locks = _hold_all(folder, here)
        try:
            _claim_all(servers, ids)
            _delete_held(folder, ids, here, servers, memories=memories, config=config, yes=yes)
        finally:
            for lock in locks:
                release(lock)
    finally:
        for server in servers:
            server.close()
    return 0


def _delete_held(
    folder: Path, ids: list[str], here: list[str], servers: list[Any], *, memories: bool, config: str | None,
    yes: bool,
) -> None:  # fmt: skip
    """Delete sessions this process holds (here and on ``servers``), after asking unless ``yes``."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    what = f"session {ids[0]}" if len(ids) == 1 else f"{len(ids)} sessions ({', '.join(ids)})"
    if not yes and not confirm(f"Delete {what}{', long-term memories included' if memories else ''}?"):
        console.print("nothing deleted")
        return
    cleared = _clear_memories(folder, ids, config) if memories else None
    logs = session_log_folders(folder, here)
    for session_id in ids:
        if session_id in here:
            console.print(escape(remove_session(folder, session_id, logs.get(session_id, [])).describe()))
        else:
            console.print(escape(f"deleted session {session_id}, which this folder did not keep"))
        _forget_copies(servers, session_id, console)
    if cleared is not None:
        console.print(
            f"deleted {cleared} long-term memor{'y' if cleared == 1 else 'ies'} recorded only in them"
        )
    else:
        console.print("[dim]long-term memories stay: add --memories to delete those of these sessions too[/]")


def _check_known(folder: Path, elsewhere: list[str], servers: list[Any]) -> None:
    """A ``UsageError`` naming the first of the sessions that neither this folder nor a server keeps."""
    for session_id in elsewhere:
        check_session_id(session_id)
        if not any(server.copy(session_id) is not None for server in servers):
            where = f"under {folder}" + (" or on the memory server" if servers else "")
            raise UsageError(f"no session {session_id} {where}; `massgen sessions list` shows them")


def _claim_all(servers: list[Any], session_ids: list[str]) -> None:
    """Hold the sessions on every server (released when the server closes): a ``UsageError`` when a
    massgen process on another machine has one."""
    for server in servers:
        for session_id in session_ids:
            server.claim(session_id)


def prune_sessions(
    state_dir: Path | None, older_than: str, *, temp_only: bool, dry_run: bool, yes: bool
) -> int:
    """Delete the sessions unused for longer than ``older_than`` (only ``temp_*`` ones with
    ``temp_only``), listed on stdout first; a session in use is kept and said."""
    folder = resolve_state_dir(state_dir)
    cutoff = datetime.now() - parse_age(older_than)
    old = [
        record
        for record in list_sessions(folder)
        if _unused_since(record, cutoff) and (record.session_id.startswith(TEMP_PREFIX) or not temp_only)
    ]
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    for record in old:
        print(f"{record.session_id}\tturns={record.turns_taken}\tupdated={record.updated_at}")
    if not old:
        kind = f"{TEMP_PREFIX}* sessions" if temp_only else "sessions"
        console.print(f"no {kind} unused for more than {older_than}")
        return 0
    if dry_run:
        console.print(f"dry run: {len(old)} session(s) would be deleted")
        return 0
    if not yes and not confirm(f"Delete these {len(old)} session(s)?"):
        console.print("nothing deleted")
        return 0
    logs = session_log_folders(folder, [record.session_id for record in old])
    servers = _servers_keeping(folder, [record.session_id for record in old], None)
    deleted = 0
    for record in old:
        try:
            lock = hold_session(folder, record.session_id)
        except UsageError as error:  # in use since it was listed: kept
            console.print(f"[yellow]{escape(str(error))}[/]")
            continue
        try:
            if not _still_unused(folder, record.session_id, cutoff):  # a run took it while we asked
                console.print(
                    f"[yellow]session {escape(record.session_id)} was used since it was listed; it is kept[/]"
                )
                continue
            removed = remove_session(folder, record.session_id, logs.get(record.session_id, []))
            console.print(escape(removed.describe()))
            _forget_copies(servers, record.session_id, console)
            deleted += 1
        finally:
            release(lock)
    for server in servers:
        server.close()
    console.print(f"deleted {deleted} of {len(old)} session(s); their long-term memories stay")
    return 0


def remove_session(state_dir: Path, session_id: str, logs: list[Path]) -> Removed:
    """Remove a session's folder, its run log folders (``logs``, as ``session_log_folders`` finds them)
    and its report; the caller holds the session's lock."""
    from massgen_cli.runlogs.reader import logs_root

    folder = sessions_root(state_dir) / session_id
    files = sorted(path.name for path in folder.iterdir() if path.name != ".lock")
    for log in logs:
        shutil.rmtree(log, ignore_errors=True)
    report = logs_root(state_dir) / f"report_{session_id}.html"
    had_report = report.is_file()
    report.unlink(missing_ok=True)
    shutil.rmtree(folder)
    return Removed(session_id, folder, files, logs, report if had_report else None)


def session_log_folders(state_dir: Path, session_ids: list[str]) -> dict[str, list[Path]]:
    """These sessions' run log folders: those their records list, and for a record that does not list all
    (written before records listed them) also those whose attempts name it, by a scan of every run log."""
    from massgen_cli.runlogs.reader import all_runs, run_folder

    folders: dict[str, list[Path]] = defaultdict(list)
    unlisted = set()
    for session_id in session_ids:
        listed, whole = _listed_log_folders(state_dir, session_id)
        paths = (run_folder(state_dir, str(name)) for name in listed)
        folders[session_id] = [path for path in paths if path is not None]
        if not whole:
            unlisted.add(session_id)
    for run in all_runs(state_dir) if unlisted else []:
        found = run_folder(state_dir, run.folder.name)
        if run.session_id in unlisted and found is not None and found not in folders[run.session_id]:
            folders[run.session_id].append(found)
    return folders


def _listed_log_folders(state_dir: Path, session_id: str) -> tuple[list[str], bool]:
    """The log folders a session's record lists, and whether they are all its runs'."""
    try:
        record = read_session(state_dir, session_id)
    except (MassGenError, ValueError, TypeError):  # no record, or a damaged one: its runs are scanned for
        return [], False
    return record.log_folders, record.lists_all_runs


def _still_unused(state_dir: Path, session_id: str, cutoff: datetime) -> bool:
    """Whether the session, read again now that it is held, is still unused since ``cutoff``."""
    try:
        return _unused_since(read_session(state_dir, session_id), cutoff)
    except (MassGenError, ValueError, TypeError):
        return False


def _hold_all(state_dir: Path, session_ids: list[str]) -> list[IO[str]]:
    """The locks of all these sessions, or none of them and the ``UsageError`` of the first refused."""
    locks: list[IO[str]] = []
    try:
        for session_id in session_ids:
            locks.append(hold_session(state_dir, session_id))
    except BaseException:
        for lock in locks:
            release(lock)
        raise
    return locks


def _clear_memories(state_dir: Path, session_ids: list[str], config: str | None) -> int:
    """How many memories recorded only in these sessions (in one of them or in several) were deleted,
    from the store of ``config`` (default: the stores of the configs the sessions were last run with,
    when they are still there)."""
    configs = {config} if config else {_session_config(state_dir, session_id) for session_id in session_ids}
    cleared = 0
    for chosen in configs:
        with open_store(chosen, state_dir) as store:
            cleared += store.clear(sessions=set(session_ids))
    return cleared


def _forget_copies(servers: list[Any], session_id: str, console: Console) -> None:
    """The session's copies on memory servers deleted too (gone for every machine)."""
    for server in servers:
        try:
            if server.delete(session_id):
                console.print(escape(f"  and its copy in {server.where()}"))
        except MassGenError as error:
            console.print(f"[yellow]  its copy in {escape(server.where())} stays: {escape(str(error))}[/]")


def _servers_keeping(state_dir: Path, session_ids: list[str], config: str | None) -> list[Any]:
    """The memory servers that keep copies of these sessions (those of ``config``, else of the configs
    the sessions last ran with, and this folder's last one for a session it does not keep), so a deleted
    session is deleted for every machine."""
    from massgen_cli.compose import session_mirror
    from massgen_cli.config import load_config

    configs: set[str | None] = (
        {config} if config else {_session_config(state_dir, session_id) for session_id in session_ids}
    )
    if not config and None in configs:  # a session this folder does not keep: the folder's last config
        configs.add(last_config(state_dir))
    servers = []
    for chosen in configs - {None}:
        try:
            mirror, _ = session_mirror(load_config(chosen).config)
        except MassGenError:
            continue
        servers += [mirror] if mirror is not None else []
    return servers


def _session_config(state_dir: Path, session_id: str) -> str | None:
    try:
        path = read_session(state_dir, session_id).config_path
    except (MassGenError, ValueError, TypeError):
        return None
    return path if path and Path(path).is_file() else None


def _unused_since(record: SessionRecord, cutoff: datetime) -> bool:
    try:
        return datetime.fromisoformat(record.updated_at) < cutoff
    except (TypeError, ValueError):
        return False

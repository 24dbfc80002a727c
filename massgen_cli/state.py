"""Where state lives: ``--state-dir``, else ``MASSGEN_HOME``, else ``./.massgen``."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from massgen_cli.errors import MassGenError

STATE_DIR_NAME = ".massgen"


PROBE_BYTES = 256 * 1024
"""What a run must be able to write before it counts on its state folder (a session, logs, memory)."""


class SharedStateFolderError(MassGenError):
    """Other users may write the state folder and it cannot be made private: the run does not start."""

    exit_code = 2


class StateFolderError(MassGenError):
    """The state folder named is no folder (a file, a device, a loop of links): the run does not start."""

    exit_code = 2


def resolve_state_dir(flag: str | Path | None = None, warn: Callable[[str], None] | None = None) -> Path:
    """The state folder (created if missing and possible: ``write_problem`` tells when it is not), only
    its user's: see ``make_private``. ``warn`` hears what was changed (stderr when None). A path that is
    not a folder is refused (``StateFolderError``), never changed."""
    chosen = flag or os.environ.get("MASSGEN_HOME") or Path.cwd() / STATE_DIR_NAME
    try:
        path = Path(chosen).expanduser().resolve()
    except (RuntimeError, OSError) as error:  # RuntimeError: a loop of symbolic links
        raise StateFolderError(f"the state folder {chosen} cannot be used ({error}); {_CHOOSE}") from None
    with contextlib.suppress(OSError):
        path.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_dir():
        raise StateFolderError(f"the state folder {path} is not a folder; {_CHOOSE}")
    make_private(path, warn or _warn_on_stderr)
    remember_state_folder(path)
    return path


KNOWN_STATE_FOLDERS = 200
"""How many state folders a user's list keeps (the latest used)."""


def state_folders_list() -> Path:
    """This user's list of the state folders they have used (``$XDG_STATE_HOME/massgen``)."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "massgen" / "state-folders"


def remember_state_folder(folder: Path) -> None:
    """Add ``folder`` to the user's list, so every run keeps them all out of its agents' reach (not its
    own alone: another project's sessions and memories are no agent's business); best effort."""
    with contextlib.suppress(OSError):
        known = _listed()
        if str(folder) in known:
            return
        listing = state_folders_list()
        listing.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = listing.with_name(f".{listing.name}.{os.getpid()}")
        temporary.write_text("\n".join([*known, str(folder)][-KNOWN_STATE_FOLDERS:]) + "\n", encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(listing)


def known_state_folders() -> list[Path]:
    """The state folders in the user's list that exist."""
    return [Path(line) for line in _listed() if Path(line).is_dir()]


def _listed() -> list[str]:
    try:
        text = state_folders_list().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [line for line in text.splitlines() if line.startswith("/")]


_CHOOSE = "name a folder with --state-dir or MASSGEN_HOME"


def make_private(folder: Path, warn: Callable[[str], None]) -> None:
    """A state folder that other users may write (they could read, replace or plant sessions, logs and
    memories) is made its user's only, 0700, and ``warn`` says so; one that is not this user's, or a
    shared folder such as /tmp, raises ``SharedStateFolderError`` with the command that fixes it."""
    try:
        info = folder.stat()
    except OSError:  # missing or unreadable: write_problem tells what that means for the run
        return
    old = stat.S_IMODE(info.st_mode)
    if not stat.S_ISDIR(info.st_mode) or os.name != "posix" or not old & (stat.S_IWGRP | stat.S_IWOTH):
        return
    if info.st_uid != os.geteuid() or old & stat.S_ISVTX:
        raise SharedStateFolderError(_shared_folder_problem(folder, info))
    new = old & stat.S_IRWXU
    try:
        folder.chmod(new)
    except OSError as error:
        raise SharedStateFolderError(_shared_folder_problem(folder, info, error)) from error
    warn(
        f"the state folder {folder} could be written by other users (mode {old:04o}); it holds sessions, "
        f"logs and memories, so it is now its user's only (mode {new:04o})"
    )


def _shared_folder_problem(folder: Path, info: os.stat_result, error: OSError | None = None) -> str:
    """Why ``folder`` stays open to other users, and the command that closes it."""
    quoted = shlex.quote(str(folder))
    mode = f"mode {stat.S_IMODE(info.st_mode):04o}"
    owned = info.st_uid == os.geteuid()
    if info.st_mode & stat.S_ISVTX:  # a shared folder by design: making it private would break others
        why = f"is a folder other users share ({mode}, like /tmp)"
        command = ""
    elif owned:
        why = f"can be written by other users ({mode}) and could not be changed ({error})"
        command = f"`chmod go-w {quoted}`"
    else:
        owner, me = _user_name(info.st_uid), _user_name(os.geteuid())
        why = f"can be written by other users ({mode}) and belongs to user {owner}, not to you"
        command = f"`chmod go-w {quoted}` as its owner (or `sudo chown {me} {quoted}`)"
    remedy = "give massgen a folder of its own with --state-dir or MASSGEN_HOME"
    return (
        f"the state folder {folder} {why}, so it cannot be kept private for sessions, logs and memories: "
        + (f"run {command}, or {remedy}" if command else remedy)
    )


def _user_name(uid: int) -> str:
    """The login name of ``uid``, or the number when it has none (as ``chown`` takes either)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def _warn_on_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def write_problem(state_dir: Path) -> str | None:
    """Why ``state_dir`` cannot take this run's writes (read-only, no permission, full), or None. A file
    of ``PROBE_BYTES`` is written and removed: creating an empty file succeeds on a full disk."""
    probe = state_dir / f".write-check.{os.getpid()}"
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        with probe.open("wb") as file:
            file.write(bytes(PROBE_BYTES))
    except OSError as error:
        return error.strerror or str(error)
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return None


def timestamp(moment: datetime | None = None) -> str:
    """``YYYYMMDD_HHMMSS_ffffff``, the stamp used in log and session names."""
    return (moment or datetime.now()).strftime("%Y%m%d_%H%M%S_%f")


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON in one step: readers never see half a file, even if the process dies."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    temporary.replace(path)


def read_json(path: Path, what: str) -> Any:
    """A JSON file of ours; a damaged one is a clear error (never silently replaced, so nothing is lost)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MassGenError(
            f"cannot read the {what} at {path} ({error}); repair or move that file, or use another --session"
        ) from error


PRIVATE_UMASK = 0o077
_user_umask: list[int] = []


def keep_files_private() -> None:
    """From now on, files and folders this process creates are its user's only (0600 / 0700): state and
    logs hold prompts, answers and memories. What tools write for the user follows ``user_umask``."""
    previous = os.umask(PRIVATE_UMASK)
    if not _user_umask:
        _user_umask.append(previous)


def user_umask() -> int:
    """The umask the user started with (what files written for the user, by tools, should follow)."""
    if _user_umask:
        return _user_umask[0]
    current = os.umask(0)
    os.umask(current)
    return current

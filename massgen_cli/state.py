"""Where state lives: ``--state-dir``, else ``MASSGEN_HOME``, else ``./.massgen``."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from massgen_cli.errors import MassGenError

STATE_DIR_NAME = ".massgen"


PROBE_BYTES = 256 * 1024
"""What a run must be able to write before it counts on its state folder (a session, logs, memory)."""


def resolve_state_dir(flag: str | Path | None = None) -> Path:
    """The state folder (created if missing and possible: ``write_problem`` tells when it is not)."""
    chosen = flag or os.environ.get("MASSGEN_HOME") or Path.cwd() / STATE_DIR_NAME
    path = Path(chosen).expanduser().resolve()
    with contextlib.suppress(OSError):
        path.mkdir(parents=True, exist_ok=True)
    return path


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

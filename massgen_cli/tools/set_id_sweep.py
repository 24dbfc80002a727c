"""After a sandboxed command, no file it made or changed in a folder it could write keeps a set-user-ID
or set-group-ID bit. Inside the sandbox such a bit does nothing (the sandbox mounts nothing setuid and
holds no capability), but the file outlives the run: a root command's ``chmod u+s`` on a shell it
copied would leave a root shell that any local user could run. Files that carried the bit before the
command (their status unchanged since) are left as they are."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

SET_ID_BITS = stat.S_ISUID | stat.S_ISGID
CLOCK_SLACK_S = 1.0
"""Status times are kept at the file system's granularity: a file changed just before the command
started counts as changed by it (a set-ID bit on it is cleared too)."""


def clear_set_id_bits(folders: Iterable[Path], started: float) -> list[Path]:
    """Clear the set-ID bits of regular files under ``folders`` whose status changed since ``started``
    (a ``time.time()``); the files cleared. Links are not followed."""
    cleared = []
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                path = Path(parent, name)
                if _changed_set_id_file(path, started - CLOCK_SLACK_S) and _clear(path):
                    cleared.append(path)
    return cleared


def _changed_set_id_file(path: Path, since: float) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and bool(info.st_mode & SET_ID_BITS) and info.st_ctime >= since


def _clear(path: Path) -> bool:
    """Clear the bits through a descriptor of the file itself (never through a link put in its place)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return False
        os.fchmod(descriptor, stat.S_IMODE(mode) & ~SET_ID_BITS)
        return True
    finally:
        os.close(descriptor)

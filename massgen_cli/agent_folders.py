"""Writing into a folder an agent controls (its workspace), never through a link: each folder on the way
is opened relative to the one before with ``O_NOFOLLOW``, and the file itself is opened the same way and
must be a regular file with no other names. An agent that plants ``tasks/plan.json`` as a link (or a
hard link) to a file of the user's gets a refusal, not the user's file overwritten."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path, PurePosixPath

from massgen_cli.state import user_umask

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class LinkRefused(OSError):
    """The path inside the folder is a link, a special file or a file with other names: nothing written."""


def write_inside(folder: Path, relative: str, text: str) -> None:
    """Write ``text`` to ``folder/relative``, making the folders on the way (see the module docstring)."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise ValueError(f"{relative!r} is not a path inside the folder")
    opened = [os.open(folder, _FOLDER)]
    try:
        for name in parts[:-1]:
            opened.append(_subfolder(opened[-1], name, relative))
        _write_file(opened[-1], parts[-1], relative, text)
    finally:
        for descriptor in reversed(opened):
            os.close(descriptor)


def _subfolder(parent: int, name: str, relative: str) -> int:
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777 & ~user_umask(), dir_fd=parent)
    try:
        return os.open(name, _FOLDER, dir_fd=parent)
    except OSError as error:  # ELOOP for a link, ENOTDIR for a file in the way
        raise LinkRefused(
            error.errno, f"{relative}: {name} is not a folder (a link is never followed)"
        ) from None


def _write_file(parent: int, name: str, relative: str, text: str) -> None:
    try:
        descriptor = os.open(name, _FILE, 0o666 & ~user_umask(), dir_fd=parent)
    except OSError as error:
        raise LinkRefused(error.errno, f"{relative}: a link or a special file, not written") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise LinkRefused(f"{relative}: not a regular file of its own (a hard link?), not written")
        os.set_blocking(descriptor, True)
        os.ftruncate(descriptor, 0)
        with open(descriptor, "wb", closefd=False) as file:
            file.write(text.encode("utf-8"))
    finally:
        os.close(descriptor)

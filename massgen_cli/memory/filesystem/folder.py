"""Memory files read and written without trusting the workspace they lie in.

An agent's tools and commands can put anything under ``memory/``: a symbolic link to a file outside, a
named pipe, a hard link to someone else's file, a file of gigabytes. So every folder on the way (the
workspace, ``memory/``, the tier) is opened relative to the one before and never through a link, a file
is opened without following a link and used only when it is a regular file with no other name, and no
more than ``FILE_BYTES`` of it are read. What is refused is said (``TierRead.skipped``), never used.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.file_kinds import BINARY_SNIFF_BYTES, special_kind
from massgen_cli.state import user_umask

MEMORY = "memory"
TIERS = ("short_term", "long_term")
SUFFIX = ".md"
FILE_BYTES = 64_000
"""The largest memory file used; a larger one is neither shown nor indexed (it stays readable with the
file tools, page by page)."""
MAX_FILES = 100
"""Memory files used per tier; past them (in name order) the rest are said to be left out."""
NAME_CHARS = 120

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

StatKey = tuple[int, int, int, int]
"""A file's inode, size and change times: when they are the same, its content is taken as unchanged."""


class UnsafeMemoryFile(OSError):
    """A memory file or folder that is not written: a link, a special file, a file with other names."""


@dataclass(frozen=True)
class MemoryFile:
    """One memory file as read: its tier, its name in the tier, its text (its head when only that was
    asked for: then it is not ``complete``) and its ``StatKey``."""

    tier: str
    name: str
    text: str
    stat_key: StatKey
    complete: bool = True

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return self.stat_key[1]

    @property
    def path(self) -> str:
        """Where it lies in its workspace, as the agent writes it (``memory/long_term/x.md``)."""
        return f"{MEMORY}/{self.tier}/{self.name}"


@dataclass
class TierRead:
    """The usable files of one tier, in name order, and what was left out with why."""

    files: list[MemoryFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def by_name(self) -> dict[str, MemoryFile]:
        return {file.name: file for file in self.files}


def read_tier(
    workspace: Path,
    tier: str,
    *,
    head: int | None = None,
    unchanged: Callable[[str, StatKey], bool] | None = None,
) -> TierRead:
    """The memory files of ``workspace/memory/<tier>/``: whole, or their first ``head`` bytes; a file
    for which ``unchanged(path, stat_key)`` holds is not read and not returned."""
    found = TierRead()
    try:
        folders = _open_tier(workspace, tier, create=False)
    except FileNotFoundError:
        return found
    except OSError as error:
        found.skipped.append(f"{MEMORY}/{tier}: {_folder_problem(error)}; nothing in it is used")
        return found
    try:
        names = sorted(name for name in os.listdir(folders[-1]) if is_memory_name(name))
        if len(names) > MAX_FILES:
            left_out = len(names) - MAX_FILES
            found.skipped.append(f"{MEMORY}/{tier}: {left_out} file(s) past the first {MAX_FILES}")
        for name in names[:MAX_FILES]:
            _read_file(folders[-1], tier, name, head, unchanged, found)
    finally:
        _close(folders)
    return found


def is_memory_name(name: str) -> bool:
    """A Markdown file's name that can be shown as it is (no control characters, not hidden)."""
    shown_as_is = name.isprintable() and len(name) <= NAME_CHARS
    return name.endswith(SUFFIX) and not name.startswith(".") and shown_as_is


def ensure_tiers(workspace: Path) -> None:
    """``memory/short_term/`` and ``memory/long_term/`` in ``workspace`` (an existing link there is
    refused, not followed)."""
    for tier in TIERS:
        _close(_open_tier(workspace, tier, create=True))


def write_memory_file(workspace: Path, tier: str, name: str, text: str, *, replace: bool = True) -> None:
    """Create (or, with ``replace``, replace) ``workspace/memory/<tier>/<name>``: ``FileExistsError``
    when it exists and may not be replaced, an ``UnsafeMemoryFile`` (nothing written) when it is a link,
    a special file or a file with other names."""
    folders = _open_tier(workspace, tier, create=True)
    try:
        descriptor, created = _open_for_writing(folders[-1], f"{MEMORY}/{tier}/{name}", name, replace)
        with _closing(descriptor):
            problem = _file_problem(os.fstat(descriptor))
            if problem is not None:
                raise UnsafeMemoryFile(f"{MEMORY}/{tier}/{name}: {problem}")
            if created:  # the user's file, with the user's usual mode
                os.fchmod(descriptor, 0o666 & ~user_umask())
            os.set_blocking(descriptor, True)
            os.ftruncate(descriptor, 0)
            with open(descriptor, "wb", closefd=False) as file:
                file.write(text.encode("utf-8"))
    finally:
        _close(folders)


def _open_for_writing(folder: int, path: str, name: str, replace: bool) -> tuple[int, bool]:
    """The file opened for writing, never through a link, and whether it was created."""
    try:
        try:
            return os.open(name, _WRITE | os.O_EXCL, 0o666, dir_fd=folder), True
        except FileExistsError:
            if not replace:
                raise
            return os.open(name, _WRITE, dir_fd=folder), False
    except FileExistsError:
        raise
    except OSError as error:
        raise UnsafeMemoryFile(f"{path}: {_file_problem_of(error)}") from None


def _open_tier(workspace: Path, tier: str, *, create: bool) -> list[int]:
    """The open folders from the workspace to its ``memory/<tier>/`` (the tier's last), each opened
    relative to the one before and never through a link."""
    folders = [os.open(workspace, _DIRECTORY)]
    try:
        for name in (MEMORY, tier):
            made = False
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=folders[-1])
                    made = True
            folders.append(os.open(name, _DIRECTORY, dir_fd=folders[-1]))
            if made:  # the user's folder, not the process's private state
                os.fchmod(folders[-1], 0o777 & ~user_umask())
    except OSError:
        _close(folders)
        raise
    return folders


def _read_file(
    folder: int,
    tier: str,
    name: str,
    head: int | None,
    unchanged: Callable[[str, StatKey], bool] | None,
    found: TierRead,
) -> None:
    path = f"{MEMORY}/{tier}/{name}"
    try:
        descriptor = os.open(name, _READ, dir_fd=folder)
    except OSError as error:
        found.skipped.append(f"{path}: {_file_problem_of(error)}")
        return
    with _closing(descriptor):
        info = os.fstat(descriptor)
        problem = _file_problem(info)
        if problem is not None:
            found.skipped.append(f"{path}: {problem}")
            return
        key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if unchanged is not None and unchanged(path, key):
            return
        os.set_blocking(descriptor, True)
        data = _read_at_most(descriptor, min(head or FILE_BYTES, FILE_BYTES))
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        found.skipped.append(f"{path}: a binary file")
        return
    text = data.decode("utf-8", errors="replace")
    found.files.append(MemoryFile(tier, name, text, key, complete=len(data) == info.st_size))


def _read_at_most(descriptor: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0 and (chunk := os.read(descriptor, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _file_problem(info: os.stat_result) -> str | None:
    """Why a file opened as a memory file is not used, or None."""
    kind = special_kind(info.st_mode)
    if kind is not None:
        return f"{kind}, not a regular file"
    if info.st_nlink > 1:
        return "a file with other hard links (it may be another file's name)"
    if info.st_size > FILE_BYTES:
        return f"over {FILE_BYTES:,} bytes ({info.st_size:,})"
    return None


def _file_problem_of(error: OSError) -> str:
    return "a symbolic link" if error.errno == errno.ELOOP else error.strerror or str(error)


def _folder_problem(error: OSError) -> str:
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return "not a folder (a symbolic link or a file)"
    return error.strerror or str(error)


@contextlib.contextmanager
def _closing(descriptor: int) -> Iterator[int]:
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def _close(descriptors: list[int]) -> None:
    for descriptor in reversed(descriptors):
        os.close(descriptor)

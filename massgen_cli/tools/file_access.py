"""Files as the file tools use them, without trusting them: a path checked by ``Roots.confine`` is
opened without following a link anywhere on its way (a folder swapped for a link after the check is
refused, not followed out of the roots), only regular files are opened (a FIFO, a device or a socket
would block or never end), an open never blocks, and a read holds only the lines it returns, each cut at
a bounded length."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BufferedReader
from pathlib import Path

from massgen_cli.file_kinds import BINARY_SNIFF_BYTES, special_kind
from massgen_cli.state import user_umask
from massgen_cli.tools.base import ToolError

LINE_BYTES = 4_000
"""The most bytes of one line a read keeps; the rest of a longer line is skipped, and the cut said."""
COUNT_LINES_BYTES = 16_000_000
"""Up to this size, a partial read also counts the file's lines (reading, never holding, the rest)."""
CHUNK_BYTES = 1 << 20
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
_WRITE = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY


class NotText(ToolError):
    """A file the tools will not read as text; ``kind`` says why in a few words (for a search's list of
    what it skipped)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def open_resolved(path: Path, flags: int, mode: int = 0o666, *, make_folders: bool = False) -> int:
    """A descriptor of ``path`` opened with ``flags``, following no link. ``path`` is resolved (it held
    no link when it was checked): each folder from the top is opened relative to the one before with
    ``O_NOFOLLOW``, so what was checked is what is opened, whatever changed in between; ``make_folders``
    makes the missing folders on the way (with the user's umask)."""
    descriptor = os.open(path.anchor, _FOLDER)
    try:
        for name in path.parts[1:-1]:
            if make_folders:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777 & ~user_umask(), dir_fd=descriptor)
            inner = _folder(descriptor, name, path)
            os.close(descriptor)
            descriptor = inner
        try:
            return os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=descriptor)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(descriptor, path.name):
                raise _became_link(path) from None
            raise
    finally:
        os.close(descriptor)


def _folder(parent: int, name: str, path: Path) -> int:
    try:
        return os.open(name, _FOLDER, dir_fd=parent)
    except NotADirectoryError:  # a file, or a link put in place of the folder since the check
        if _is_link(parent, name):
            raise _became_link(path.parent) from None
        raise ToolError(f"{path}: {name} is not a folder") from None


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _became_link(path: Path) -> ToolError:
    return ToolError(f"{path} (or a folder on its way) became a link after it was checked; not followed")


@contextmanager
def open_regular(path: Path) -> Iterator[BufferedReader]:
    """``path`` (resolved) opened for reading, or a ``ToolError`` when it is missing, unreadable or not a
    regular file. The open does not block (O_NONBLOCK): a FIFO without a writer is refused, not waited
    on; nothing on the way is followed if it is a link."""
    try:
        descriptor = open_resolved(path, _READ)
    except FileNotFoundError:
        raise NotText(f"{path} does not exist", "missing") from None
    except ToolError as error:
        raise NotText(str(error), "not followed") from None
    except OSError as error:
        raise NotText(f"cannot read {path}: {error.strerror}", "unreadable") from None
    kind = special_kind(os.fstat(descriptor).st_mode)
    if kind is not None:
        os.close(descriptor)
        raise _special(path, kind)
    os.set_blocking(descriptor, True)
    with open(descriptor, "rb") as file:
        yield file


@contextmanager
def opened_folder(path: Path) -> Iterator[int]:
    """A descriptor of the folder ``path`` (resolved), opened without following a link on the way."""
    try:
        descriptor = open_resolved(path, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        raise ToolError(f"{path} is not a folder; use read_file") from None
    except FileNotFoundError:
        raise ToolError(f"{path} does not exist") from None
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def _special(path: Path, kind: str) -> NotText:
    hint = "use list_directory" if kind == "a folder" else "the file tools use regular files only"
    return NotText(f"{path} is {kind}; {hint}", "folder" if kind == "a folder" else "special file")


def write_regular(path: Path, text: str, *, make_folders: bool = False) -> bool:
    """Replace the content of the regular file ``path`` (resolved), created when missing with the user's
    usual mode; whether it was created. A folder, a FIFO or a device is refused before anything is
    opened for writing, the open never blocks, and nothing on the way is followed if it is a link."""
    try:
        kind = special_kind(os.stat(path, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        kind = None
    if kind is not None:
        raise _special(path, kind)
    descriptor, created = _open_for_writing(path, make_folders)
    try:
        if special_kind(os.fstat(descriptor).st_mode) is not None:  # replaced since the check above
            raise ToolError(f"{path} is not a regular file; the file tools use regular files only")
        if created:  # the user's file, with the user's usual mode (the process keeps its own private)
            os.fchmod(descriptor, 0o666 & ~user_umask())
        os.set_blocking(descriptor, True)
        os.ftruncate(descriptor, 0)
        with open(descriptor, "w", encoding="utf-8", closefd=False) as file:
            file.write(text)
    finally:
        os.close(descriptor)
    return created


def _open_for_writing(path: Path, make_folders: bool) -> tuple[int, bool]:
    """A new file at ``path`` (created: True), else the one there."""
    try:
        try:
            return open_resolved(path, _WRITE | os.O_CREAT | os.O_EXCL, make_folders=make_folders), True
        except FileExistsError:
            return open_resolved(path, _WRITE), False
    except OSError as error:
        raise ToolError(f"cannot write {path}: {error.strerror}") from None


def refuse_binary(file: BufferedReader, path: Path) -> None:
    """A ``ToolError`` when the file's first bytes hold a NUL (binary content); the file is rewound."""
    head = file.read(BINARY_SNIFF_BYTES)
    file.seek(0)
    if b"\0" in head:
        raise NotText(f"{path} is a binary file ({os.fstat(file.fileno()).st_size:,} bytes)", "binary")


@dataclass
class Lines:
    """Lines ``first``… of a file as read: their text, whether the file ended after them, and how many
    lines it has when that is known (``total``)."""

    first: int
    shown: list[str] = field(default_factory=list)
    ended: bool = False
    total: int | None = None

    @property
    def last(self) -> int:
        return self.first + len(self.shown) - 1


def read_lines(file: BufferedReader, first: int, count: int, budget_chars: int) -> Lines:
    """Lines ``first`` to ``first + count - 1`` (1-based) of ``file``, stopping early once they hold
    ``budget_chars`` characters; the lines before are skipped by reading, never held."""
    lines = Lines(first)
    for skipped in range(first - 1):
        if not _skip_line(file):
            lines.ended, lines.total = True, skipped
            return lines
    used = 0
    while len(lines.shown) < count and used < budget_chars:
        line = _bounded_line(file)
        if line is None:
            break
        lines.shown.append(line)
        used += len(line)
    lines.ended = not file.peek(1)
    if lines.ended:
        lines.total = lines.last
    elif os.fstat(file.fileno()).st_size <= COUNT_LINES_BYTES:
        lines.total = lines.last + _count_rest(file)
    return lines


def _bounded_line(file: BufferedReader) -> str | None:
    """The next line's text, cut at ``LINE_BYTES`` bytes (the rest of a longer line is read past and
    the cut said); None at the end of the file."""
    raw = file.readline(LINE_BYTES)
    if not raw:
        return None
    text = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
    if raw.endswith(b"\n"):
        return text
    rest = file.readline(CHUNK_BYTES)
    if rest in (b"", b"\n", b"\r\n"):
        return text
    skipped = len(rest) + _skip_line(file, rest)
    return f"{text} [line cut: {skipped:,}+ more bytes not shown]"


def _skip_line(file: BufferedReader, started: bytes = b"") -> int:
    """Read past the rest of a line (``started`` is what was already read of it); how many bytes that
    took (0: the file had ended)."""
    read, chunk = 0, started
    while not chunk.endswith(b"\n"):
        chunk = file.readline(CHUNK_BYTES)
        if not chunk:
            break
        read += len(chunk)
    return read


def _count_rest(file: BufferedReader) -> int:
    """The lines from the file's position to its end (a last line without a newline counts)."""
    count, last = 0, b"\n"
    while chunk := file.read(CHUNK_BYTES):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def whole_text(path: Path, max_bytes: int) -> str:
    """A regular text file's whole content, or a ``ToolError`` for a special, binary or too large file
    (never more than ``max_bytes`` are read)."""
    with open_regular(path) as file:
        refuse_binary(file, path)
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise NotText(
            f"{path} is larger than {max_bytes:,} bytes; this tool takes smaller files",
            f"over {max_bytes:,} bytes",
        )
    return data.decode("utf-8", errors="replace")

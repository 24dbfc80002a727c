"""What kind of file a path is, as the file tools and the filesystem memory both judge it: a file
that is not a regular one (a folder, a FIFO, a device, a socket), and how much of a file's head is read
to tell a binary file (a NUL byte in it) from text."""

from __future__ import annotations

import stat

BINARY_SNIFF_BYTES = 8192
"""How much of a file's head is looked at for a NUL byte, the sign of a binary file."""

SPECIAL_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in SPECIAL_KINDS if test(mode)), "not a regular file")

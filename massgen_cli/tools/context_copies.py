"""Copies of a context path an agent may write (MassGen's ``write_mode``: isolated, auto, worktree): the
agent changes its copy, never the original; the winner's changes are applied to the original after the
final answer. A copy remembers each original file's size and time when it was copied, which tells what
the agent changed and what changed in the original meanwhile (drift).

Only regular files are copied and applied; links, special files and the folders the run keeps for itself
(workspaces, snapshots, the state folder, ``.git`` and the like) are left out. Applying writes through no
link (each folder is opened without following one) and never into a protected path (the config's, or
what the user runs unread: ``.envrc``, a virtualenv)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from massgen_cli.state import user_umask
from massgen_cli.tools.file_access import open_resolved
from massgen_cli.tools.protected import protected_place
from massgen_cli.tools.snapshots import IGNORED

DriftPolicy = Literal["skip", "prefer_presenter", "fail"]
Stamp = tuple[int, int]
"""A file's size and modification time (ns)."""


@dataclass(frozen=True)
class Applied:
    """What applying a copy did: files written and deleted in the original; files changed in the original
    since they were copied (skipped with ``skip``, overwritten with ``prefer_presenter``); protected files
    the copy changed (never applied); whether nothing was applied because of drift (``fail``)."""

    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    drifted: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    refused: bool = False


@dataclass(frozen=True)
class ContextCopy:
    """One agent's copy of one context path (a folder, or a single file)."""

    original: Path
    copy: Path
    baseline: dict[str, Stamp]
    protected: tuple[Path, ...] = ()

    @classmethod
    def make(
        cls, original: Path, copy: Path, skip: tuple[Path, ...] = (), protected: tuple[Path, ...] = ()
    ) -> ContextCopy:
        """Copy ``original`` (resolved) into the folder ``copy`` (made afresh), leaving out ``skip``."""
        if copy.exists():
            shutil.rmtree(copy)
        copy.mkdir(parents=True)
        made = cls(original, copy, {}, protected)
        for relative in _files(made.base, (*skip, copy), only=made._single):
            source, target = made.base / relative, copy / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
            made.baseline[relative] = _stamp(source)
        return made

    @property
    def base(self) -> Path:
        """The folder the relative paths start from (a single file's folder)."""
        return self.original if self._single is None else self.original.parent

    @property
    def _single(self) -> str | None:
        return None if self.original.is_dir() else self.original.name

    def changes(self) -> tuple[list[str], list[str]]:
        """The files the agent wrote (new or changed) and deleted in its copy."""
        now = set(_files(self.copy, (), only=self._single))
        written = [relative for relative in sorted(now) if self._changed(relative)]
        return written, sorted(set(self.baseline) - now)

    def apply(self, policy: DriftPolicy = "skip") -> Applied:
        """The copy's changes written to the original, as ``policy`` says for drifted files."""
        written, deleted = self.changes()
        protected = [relative for relative in [*written, *deleted] if self._is_protected(relative)]
        drifted = [relative for relative in [*written, *deleted] if self._drifted(relative)]
        if policy == "fail" and drifted:
            return Applied(drifted=drifted, protected=protected, refused=True)
        held = set(protected) | (set(drifted) if policy == "skip" else set())
        to_write = [relative for relative in written if relative not in held]
        to_delete = [relative for relative in deleted if relative not in held]
        for relative in to_write:
            _write(self.base / relative, (self.copy / relative).read_bytes())
        for relative in to_delete:
            target = self.base / relative
            if target.is_file() and not target.is_symlink():
                target.unlink()
        return Applied(to_write, to_delete, drifted, protected)

    def _changed(self, relative: str) -> bool:
        if relative not in self.baseline:
            return True
        mine = _stamp(self.copy / relative)
        if mine == self.baseline[relative]:
            return False  # copied with its time kept, and not written since
        original = self.base / relative
        if _stamp_or_none(original) != self.baseline[relative]:
            return True  # the original changed too: what was copied is gone, so this counts as written
        return (self.copy / relative).read_bytes() != original.read_bytes()

    def _drifted(self, relative: str) -> bool:
        return _stamp_or_none(self.base / relative) != self.baseline.get(relative)

    def _is_protected(self, relative: str) -> bool:
        """Whether ``relative`` is a place the config protects or one the user runs unread (``.envrc``,
        a virtualenv's files: ``protected.protected_place``)."""
        if protected_place(PurePosixPath(relative)):
            return True
        resolved = (self.base / relative).resolve()
        return any(resolved == place or resolved.is_relative_to(place) for place in self.protected)


def _files(top: Path, skip: Collection[Path], *, only: str | None = None) -> Iterator[str]:
    """The regular files under ``top`` (relative, posix), none inside ``skip`` or an ignored folder;
    ``only``: that one file of ``top``."""
    if only is not None:
        if (top / only).is_file() and not (top / only).is_symlink():
            yield only
        return
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                path = Path(entry.path)
                if entry.name in IGNORED or path in skip or any(path.is_relative_to(p) for p in skip):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                elif entry.is_file(follow_symlinks=False):
                    yield path.relative_to(top).as_posix()


def _stamp(path: Path) -> Stamp:
    status = os.stat(path, follow_symlinks=False)
    return status.st_size, status.st_mtime_ns


def _stamp_or_none(path: Path) -> Stamp | None:
    try:
        return _stamp(path) if stat.S_ISREG(os.stat(path, follow_symlinks=False).st_mode) else None
    except FileNotFoundError:
        return None


def _write(path: Path, data: bytes) -> None:
    """``data`` into the regular file ``path``, following no link on the way (folders made as needed)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK
    descriptor = open_resolved(path, flags, 0o666 & ~user_umask(), make_folders=True)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(descriptor, True)
        with open(descriptor, "wb", closefd=False) as file:
            file.write(data)
    finally:
        os.close(descriptor)

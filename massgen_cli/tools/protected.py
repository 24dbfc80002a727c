"""What the user runs without reading it, kept from agents inside the folders they may write: git's hooks,
config and ``commondir`` (which names the folder git takes both from) of every repository in the folder,
nested ones and submodules' too, and a ``.git`` file (which names the repository's folder); virtualenvs
(``.venv``, ``venv``: their programs, ``activate``, the ``.pth`` files and modules Python runs at start);
direnv's ``.envrc``.

For a sandboxed command a ``Guard`` says how: the places that exist are bound read-only, and each folder
between the root and such a place is bound onto itself (still writable), so it is a mount point that
cannot be renamed or removed: a command cannot move ``.git`` aside and make a ``.git`` of its own with its
own hooks. A place that does not exist yet (a repository's missing ``hooks``, any ``.envrc``) cannot be
bound without making it in the user's folder; one a command makes is removed once the command has ended
(everything it started ended with it) and the result says so. The file tools refuse to write any of
these places (``protected_place``)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT = ".git"
GIT_PLACES = ("hooks", "config", "commondir")
"""Inside a git folder: the hooks git runs, the config (its fsmonitor, its aliases, core.hooksPath) and
the file that points git at another folder for both."""
GIT_FOLDERS = ("modules", "worktrees")
"""Inside a git folder, where the git folders of submodules and linked worktrees live."""
VIRTUALENVS = (".venv", "venv")
ENVRC = ".envrc"


@dataclass(frozen=True)
class Guard:
    """How one writable folder's protected places are kept: ``read_only`` binds, ``pinned`` folders bound
    onto themselves (so not renamed), and the places that were ``absent`` before a command."""

    root: Path
    read_only: tuple[Path, ...] = ()
    pinned: tuple[Path, ...] = ()
    absent: tuple[Path, ...] = ()
    envrcs: frozenset[Path] = frozenset()
    """Every ``.envrc`` there was (a new one may be made in any folder)."""
    skip: tuple[Path, ...] = ()

    def planted(self) -> list[Path]:
        """The protected places that exist now and were absent when the guard was made."""
        made = [path for path in self.absent if os.path.lexists(path)]
        envrcs = [path for path in _found(self.root, self.skip) if path.name == ENVRC]
        return list(dict.fromkeys([*made, *(path for path in envrcs if path not in self.envrcs)]))


def guard(root: Path, extra: Iterable[Path] = (), skip: Iterable[Path] = ()) -> Guard:
    """The guard of the writable folder ``root``: its protected places (and ``extra`` ones, the config's
    ``protected_paths``) found without following links or entering ``skip`` (folders hidden anyway)."""
    read_only: list[Path] = []
    absent: list[Path] = []
    hidden = tuple(skip)
    found = list(_found(root, hidden))
    for path in found:
        if path.name == GIT and not path.is_symlink() and path.is_dir():
            for folder in _git_folders(path):
                places = [folder / name for name in GIT_PLACES]
                read_only += [place for place in places if _real(place)]
                absent += [place for place in places if not os.path.lexists(place)]
        elif _real(path):
            read_only.append(path)
    read_only += [path for path in extra if _real(path) and path.is_relative_to(root) and path != root]
    pinned = {parent for path in read_only for parent in path.parents if parent.is_relative_to(root)}
    pinned -= {root, *read_only}
    envrcs = frozenset(path for path in found if path.name == ENVRC)
    return Guard(root, tuple(sorted(set(read_only))), tuple(sorted(pinned)), tuple(absent), envrcs, hidden)


def protected_place(relative: PurePosixPath) -> str:
    """The protected place a path relative to a writable root lies in (``.git/hooks``, ``.venv``,
    ``.envrc``…), or ""."""
    parts = relative.parts
    for index, part in enumerate(parts):
        if part == ENVRC or (part == GIT and index == len(parts) - 1):
            return "/".join(parts[: index + 1])
        if part in VIRTUALENVS and index < len(parts) - 1:
            return "/".join(parts[: index + 1])
        if part == GIT and (place := next((p for p in parts[index + 1 :] if p in GIT_PLACES), None)):
            return "/".join(parts[: parts.index(place, index) + 1])
    return ""


def remove_planted(paths: Iterable[Path]) -> list[Path]:
    """Remove what a command made at protected places (links are removed, never followed); the removed."""
    removed = []
    for path in paths:
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def _found(root: Path, skip: tuple[Path, ...]) -> Iterator[Path]:
    """The entries under ``root`` whose names make them protected places; a git folder or a virtualenv is
    not entered, nor a folder of ``skip``, nor a link."""
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        for name in [*folders, *files]:
            if name in (GIT, ENVRC) or (name in VIRTUALENVS and name in folders):
                yield here / name
        folders[:] = [
            name for name in folders if name != GIT and name not in VIRTUALENVS and here / name not in skip
        ]


def _git_folders(git: Path) -> list[Path]:
    """The git folder ``git`` and those of its submodules and linked worktrees (each with a ``HEAD``)."""
    found = [git]
    for name in GIT_FOLDERS:
        for folder, folders, files in os.walk(git / name):
            if "HEAD" in files:
                found.append(Path(folder))
                folders[:] = [name for name in folders if name in GIT_FOLDERS]
    return found


def _real(path: Path) -> bool:
    """Whether ``path`` exists and is no link (a link cannot be bound without binding where it leads)."""
    return os.path.lexists(path) and not path.is_symlink()

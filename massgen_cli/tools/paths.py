"""Path confinement, the one check every file tool calls: a path is used only when, after ``..`` and
symlinks are resolved, it lies inside one of the agent's roots (and, to be written, a writable one), and
not inside a private folder (the runner's state folder) unless a root lies inside that folder."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from massgen_cli.tools.base import ToolError
from massgen_cli.tools.protected import Guard, guard, protected_place


@dataclass(frozen=True)
class Root:
    """A folder (or single file) an agent may use; ``writable`` lets the file tools change it, and
    ``final_only`` lets them change it in the final presentation only (a context path with permission
    write, as in MassGen: agents cannot overwrite a user's files while they still disagree)."""

    path: Path
    writable: bool
    final_only: bool = False
    protected: tuple[Path, ...] = ()
    """Places inside that the config keeps read-only (MassGen's ``protected_paths``), resolved."""

    @classmethod
    def of(
        cls, path: str | Path, writable: bool, final_only: bool = False, protected: Sequence[str] = ()
    ) -> Root:
        resolved = Path(path).expanduser().resolve()
        inside = resolved if resolved.is_dir() else resolved.parent  # a file's are beside it, as in MassGen
        return cls(resolved, writable, final_only, tuple((inside / place).resolve() for place in protected))

    @property
    def permission(self) -> str:
        return "write" if self.writable else "write in the final presentation" if self.final_only else "read"


@dataclass
class Roots:
    """An agent's roots; relative paths in tool calls resolve against ``base`` (its workspace).
    ``presenting`` is on while the agent writes the final answer. ``private`` folders (the runner's state)
    are out of reach whatever root holds them, except through a root inside them."""

    base: Path
    roots: tuple[Root, ...]
    presenting: bool = False
    private: tuple[Path, ...] = ()

    def confine(self, raw: str, *, write: bool = False) -> Path:
        """The resolved path of ``raw``, or a ``ToolError`` saying why the agent may not use it (naming
        the absolute path ``raw`` came to)."""
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            raise ToolError(f"invalid path {raw!r}")
        candidate = Path(raw).expanduser()
        resolved = Path(os.path.realpath(candidate if candidate.is_absolute() else self.base / candidate))
        root, named = self._innermost(resolved), _named(raw, resolved)
        if root is not None and self.is_private(resolved):
            raise ToolError(f"{named} is in the runner's own state folder, which no agent may use")
        if root is None:
            raise ToolError(f"{named} is outside the folders this agent may use ({self.describe()})")
        if write and not (root.writable or (root.final_only and self.presenting)):
            where = f"inside {root.path}: {root.permission}"
            raise ToolError(f"{named} is read-only for this agent now ({where})")
        if write and (protected := _protected(resolved, root.path)):
            raise ToolError(f"{named} is protected: no agent writes {protected} (the user runs its files)")
        if write and any(resolved.is_relative_to(place) for place in root.protected):
            raise ToolError(f"{named} is protected by the config (protected_paths): read-only for agents")
        return resolved

    def guards(self, skip: Iterable[Path] = ()) -> list[Guard]:
        """How the sandbox keeps the protected places (``protected``, and the config's) of each folder the
        agent may write now; ``skip``: folders hidden anyway, not looked into."""
        hidden = tuple(skip)
        return [
            guard(root.path, root.protected, hidden)
            for root in self.roots
            if self.may_write(root) and root.path.is_dir()
        ]

    def may_write(self, root: Root) -> bool:
        """Whether the agent may write in ``root`` now."""
        return root.writable or (root.final_only and self.presenting)

    def is_private(self, path: Path) -> bool:
        """Whether ``path`` (resolved) lies in a private folder and in no root inside that folder."""
        root = self._innermost(path)
        return any(
            path.is_relative_to(folder) and (root is None or not root.path.is_relative_to(folder))
            for folder in self.private
        )

    @property
    def has_workspace(self) -> bool:
        """Whether ``base`` is the agent's own workspace (not the current folder, for want of one)."""
        return any(root.path == self.base and root.writable for root in self.roots)

    def relative_rule(self) -> str:
        """What a relative path in a file tool call means, in one sentence for the model."""
        if self.has_workspace:
            return f"A relative path starts at your workspace, {self.base}."
        return f"A relative path starts at the current folder, {self.base} (you have no workspace)."

    def explained(self) -> str:
        """What the system prompt says of the roots: the rule for relative paths, with an example, and
        the roots one per line with their permission."""
        example = Path("notes", "plan.md")
        return (
            f"{self.relative_rule()} In file tool calls `{example}` means {self.base / example}; each "
            f"result names the absolute path it used. The file tools reach only these places:\n"
            f"{self.listing()}"
        )

    def describe(self) -> str:
        return ", ".join(_root_line(root) for root in self.roots)

    def listing(self) -> str:
        """The roots one per line, each with its permission."""
        return "\n".join(f"- {_root_line(root)}" for root in self.roots)

    def _innermost(self, path: Path) -> Root | None:
        inside = [root for root in self.roots if path.is_relative_to(root.path)]
        return max(inside, key=lambda root: len(root.path.parts), default=None)


def _protected(path: Path, root: Path) -> str:
    """The protected place ``path`` (inside ``root``) lies in, or ""."""
    return protected_place(PurePosixPath(path.relative_to(root).as_posix()))


def _root_line(root: Root) -> str:
    return f"{root.path} ({root.permission})"


def _named(raw: str, resolved: Path) -> str:
    """A path as the model wrote it and, when that differs, the absolute path it came to."""
    return str(resolved) if raw == str(resolved) else f"{raw} (= {resolved})"

"""Path confinement, the one check every file tool calls: a path is used only when, after ``..`` and
symlinks are resolved, it lies inside one of the agent's roots (and, to be written, a writable one)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from massgen_cli.tools.base import ToolError


@dataclass(frozen=True)
class Root:
    """A folder (or single file) an agent may use; ``writable`` lets the file tools change it, and
    ``final_only`` lets them change it in the final presentation only (a context path with permission
    write, as in MassGen: agents cannot overwrite a user's files while they still disagree)."""

    path: Path
    writable: bool
    final_only: bool = False

    @classmethod
    def of(cls, path: str | Path, writable: bool, final_only: bool = False) -> Root:
        return cls(Path(path).expanduser().resolve(), writable, final_only)

    @property
    def permission(self) -> str:
        return "write" if self.writable else "write in the final presentation" if self.final_only else "read"


@dataclass
class Roots:
    """An agent's roots; relative paths in tool calls resolve against ``base`` (its workspace).
    ``presenting`` is on while the agent writes the final answer."""

    base: Path
    roots: tuple[Root, ...]
    presenting: bool = False

    def confine(self, raw: str, *, write: bool = False) -> Path:
        """The resolved path of ``raw``, or a ``ToolError`` saying why the agent may not use it."""
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            raise ToolError(f"invalid path {raw!r}")
        candidate = Path(raw).expanduser()
        resolved = Path(os.path.realpath(candidate if candidate.is_absolute() else self.base / candidate))
        root = self._innermost(resolved)
        if root is None:
            raise ToolError(f"{raw} is outside the folders this agent may use ({self.describe()})")
        if write and not (root.writable or (root.final_only and self.presenting)):
            raise ToolError(f"{raw} is read-only for this agent now (inside {root.path}: {root.permission})")
        return resolved

    def shown(self, path: Path) -> str:
        """``path`` as the model should write it: relative to the workspace when inside it."""
        return (
            str(path.relative_to(self.base))
            if path.is_relative_to(self.base) and path != self.base
            else str(path)
        )

    def describe(self) -> str:
        return ", ".join(f"{root.path} ({root.permission})" for root in self.roots)

    def _innermost(self, path: Path) -> Root | None:
        inside = [root for root in self.roots if path.is_relative_to(root.path)]
        return max(inside, key=lambda root: len(root.path.parts), default=None)

"""MassGen's isolating ``write_mode`` (isolated, auto, worktree): each agent with a workspace changes its
own copies of the writable context paths, made at its first step of an attempt in
``<workspace>/.worktree/ctx_<N>`` (its peers see them in its snapshot); when the turn is won, the winner's
changes are applied to the originals (``drift_conflict_policy`` decides for files changed meanwhile) and
every copy is removed; a rejected attempt or a failed turn removes the copies and changes nothing.
``ContextCopies`` is the step extension and the attempt part."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import Notice, RunEvent
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.features.workspaces import agent_workspaces

if TYPE_CHECKING:
    from massgen_cli.tools.context_copies import Applied, ContextCopy, DriftPolicy

COPIES_FOLDER = ".worktree"


@dataclass(frozen=True)
class WritablePath:
    """A context path with permission write (resolved) and its protected places."""

    path: Path
    protected: tuple[Path, ...] = ()


class ContextCopies(StepExtension):
    name: ClassVar[str] = "context copies"
    part_name: ClassVar[str] = "context copies"

    def __init__(
        self,
        paths: Mapping[str, Sequence[WritablePath]],
        skip: tuple[Path, ...],
        policy: DriftPolicy,
        emit: Callable[[RunEvent], None],
    ):
        """``paths``: each agent's writable context paths; ``skip``: folders never copied."""
        self.paths, self.skip, self.policy, self.emit = dict(paths), skip, policy, emit
        self.copies: dict[str, list[ContextCopy]] = {}

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        """The agent's copies, made at its first step of the attempt, and what becomes of them."""
        if at.workspace is None or not self.paths.get(at.agent_id):
            return ""
        copies = self.copies.get(at.agent_id)
        if copies is None:
            copies = await asyncio.to_thread(self._make, self.paths[at.agent_id], at.workspace)
            self.copies[at.agent_id] = copies
        listed = "\n".join(f"- {copy.original} → your copy {copy.copy}" for copy in copies)
        return (
            "The context paths you may change are copied into your workspace: change your copies, never "
            "the originals (they are read-only). If your answer wins, your changes to the copies are "
            f"applied to the originals after the final answer.\n{listed}"
        )

    def presentation_note(self, agent_id: str) -> str:
        if agent_id not in self.copies:
            return ""
        return "Write your changes to the context paths in your copies: they are applied to the originals."

    def begin(self, at: AttemptAt) -> None:
        self._remove_copies()

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """The winner's changes applied to the originals, said; then every copy removed."""
        try:
            if outcome.answered and outcome.winner in self.copies:
                for copy in self.copies[outcome.winner]:
                    applied = await asyncio.to_thread(copy.apply, self.policy)
                    self.emit(Notice("info", _said(copy, applied, self.policy)))
        except OSError as error:
            return [f"the winner's changes to the context paths were not all applied: {error}"]
        finally:
            self._remove_copies()
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        self._remove_copies()

    def _make(self, paths: Sequence[WritablePath], workspace: Path) -> list[ContextCopy]:
        folder = workspace / COPIES_FOLDER
        return [
            _copy_class().make(entry.path, folder / f"ctx_{number}", self.skip, entry.protected)
            for number, entry in enumerate(paths, start=1)
        ]

    def _remove_copies(self) -> None:
        for copies in self.copies.values():
            for copy in copies:
                shutil.rmtree(copy.copy, ignore_errors=True)
        self.copies.clear()


def _said(copy: ContextCopy, applied: Applied, policy: DriftPolicy) -> str:
    """One line of what applying ``copy`` did to its original."""
    if applied.refused:
        shown = ", ".join(applied.drifted)
        return f"{copy.original}: nothing applied: changed there since it was copied ({shown}); {policy}"
    parts = [f"{len(applied.written)} file(s) written", f"{len(applied.deleted)} deleted"]
    if applied.drifted:
        kept = "kept as they are" if policy == "skip" else "overwritten"
        parts.append(f"changed there meanwhile, {kept}: {', '.join(applied.drifted)}")
    if applied.protected:
        parts.append(f"protected, not applied: {', '.join(applied.protected)}")
    return f"{copy.original}: the winner's changes applied: {'; '.join(parts)}"


def _copy_class() -> type[ContextCopy]:
    from massgen_cli.tools.context_copies import ContextCopy

    return ContextCopy


def _writable_paths(opening: Opening) -> dict[str, list[WritablePath]]:
    """Each agent's writable context paths (the run's and its own), for agents with a workspace."""
    from massgen_cli.tools.paths import Root

    orchestrator = opening.config.orchestrator
    return {
        agent.id or "": [
            WritablePath(root.path, root.protected)
            for entry in [*orchestrator.context_paths, *agent.backend.context_paths]
            if entry.permission == "write"
            for root in [Root.of(entry.path, True, protected=entry.protected_paths)]
        ]
        for agent in opening.config.agents
        if agent.backend.cwd is not None
    }


def _open(opening: Opening) -> Opened | None:
    """Copies of the writable context paths; none to copy: nothing to add. A copy leaves out the run's
    private places, the agents' workspaces and the run's own folders."""
    paths = _writable_paths(opening)
    if not any(paths.values()):
        return None
    config, place = opening.config, opening.place
    orchestrator = config.orchestrator
    runs_own = [orchestrator.snapshot_storage, orchestrator.agent_temporary_workspace]
    skip = (
        *(path for path in place.private if path != Path.cwd()),
        *agent_workspaces(config).values(),
        *(Path(folder).expanduser().resolve() for folder in runs_own if folder),
    )
    policy = orchestrator.coordination.drift_conflict_policy
    copies = ContextCopies(paths, skip, policy, opening.emit)
    return Opened(copies, copies)


FEATURE = Feature(
    "context copies",
    wanted=lambda opening: opening.config.orchestrator.coordination.isolates_writes,
    open=_open,
    steps_after=("memory tools",),
    commits_after=("long-term memory",),
)
"""Agents change copies of the writable context paths when write_mode isolates their writes."""

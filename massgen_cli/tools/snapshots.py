"""Workspace snapshots (MassGen's ``snapshot_storage`` and ``agent_temporary_workspace``): when an agent
submits a new answer its workspace is copied to the snapshot storage; before each step an agent's view
of its peers is rebuilt under ``agent_temporary_workspace/<agent>/<anonymous label>/`` from their latest
snapshots, read-only through the file tools. A rejected attempt's or failed turn's snapshots are removed.

Layout: ``<snapshot_storage>/<session>/turn_<N>/attempt_<M>/<agent>/``."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome

IGNORED = frozenset({".git", "__pycache__", "node_modules", ".venv"})
MAX_DEPTH = 64
"""Folders deeper than this in a workspace are left out of its snapshot (and said)."""


class Snapshots:
    """The snapshots of one session; ``labels`` maps each agent id to the anonymous name peers see. A part
    of the attempt lifecycle."""

    part_name: ClassVar[str] = "workspace snapshots"

    def __init__(self, storage: Path, views: Path, session_id: str, labels: Mapping[str, str]):
        self.storage = storage.resolve()
        self.views = views.resolve()
        self.session_id = session_id
        self.labels = dict(labels)
        self.turn, self.attempt = 1, 1
        self.generation = 0  # changes whenever a snapshot is taken or removed
        self.views_at: dict[str, tuple[int, list[str]]] = {}  # agent → (generation, labels) of its view
        # Copies run in worker threads, and a cancelled step's copy goes on beside its restart's: one
        # copy or removal at a time, so none removes a folder another is walking.
        self.busy = threading.RLock()

    def begin(self, at: AttemptAt) -> None:
        self.turn, self.attempt = at.turn, at.attempt
        self.generation += 1

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """An answered turn keeps its snapshots (the winner's workspace is the output folder); one without
        an answer is removed like a failed one."""
        if not outcome.answered:
            self.roll_back(outcome.at, whole_turn=True)
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """Remove the snapshots of an attempt post-evaluation rejected, or of every attempt of a turn that
        failed."""
        folder = self.storage / self.session_id / f"turn_{at.turn}"
        with self.busy:
            shutil.rmtree(folder if whole_turn else folder / f"attempt_{at.attempt}", ignore_errors=True)
            self._clear_views()

    def view_folder(self, agent_id: str) -> Path:
        """Where ``agent_id`` finds its peers' snapshots (created empty until there are some)."""
        folder = self.views / agent_id
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def take(self, agent_id: str, workspace: Path) -> list[str]:
        """Copy ``workspace`` as ``agent_id``'s latest snapshot of this attempt; what was left out (special
        files such as a named pipe, folders past ``MAX_DEPTH``)."""
        target = self._attempt_folder(self.turn, self.attempt) / agent_id
        with self.busy:
            if target.exists():
                shutil.rmtree(target)
            left_out = copy_tree(workspace, target)
            self.generation += 1
        return left_out

    def refresh_view(self, agent_id: str) -> list[str]:
        """Rebuild ``agent_id``'s view from its peers' latest snapshots (unless no snapshot changed since
        its last rebuild); the labels it now holds."""
        with self.busy:
            return self._rebuild_view(agent_id)

    def _rebuild_view(self, agent_id: str) -> list[str]:
        built = self.views_at.get(agent_id)
        if built is not None and built[0] == self.generation:
            return built[1]
        view = self.view_folder(agent_id)
        for old in view.iterdir():
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink()
        shown = []
        attempt = self._attempt_folder(self.turn, self.attempt)
        for peer, label in self.labels.items():
            snapshot = attempt / peer
            if peer != agent_id and snapshot.is_dir():
                copy_tree(snapshot, view / label)
                shown.append(label)
        self.views_at[agent_id] = (self.generation, shown)
        return shown

    def _attempt_folder(self, turn: int, attempt: int) -> Path:
        return self.storage / self.session_id / f"turn_{turn}" / f"attempt_{attempt}"

    def _clear_views(self) -> None:
        self.generation += 1
        self.views_at.clear()
        for agent_id in self.labels:
            shutil.rmtree(self.views / agent_id, ignore_errors=True)


def copy_tree(source: Path, target: Path) -> list[str]:
    """Copy ``source`` into ``target`` folder by folder, without recursion: regular files with their
    times, links as links, never what a special file (a named pipe, a socket, a device) would give, nor
    folders past ``MAX_DEPTH``; returns what was left out, as paths relative to ``source``."""
    left_out: list[str] = []
    pending = [(source, target, 0)]
    while pending:
        folder, copy, depth = pending.pop()
        copy.mkdir(parents=True, exist_ok=True)
        with os.scandir(folder) as scanned:
            entries = sorted((entry for entry in scanned if entry.name not in IGNORED), key=lambda e: e.name)
        for entry in entries:
            into, relative = copy / entry.name, str(Path(entry.path).relative_to(source))
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), into)
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 < MAX_DEPTH:
                    pending.append((Path(entry.path), into, depth + 1))
                else:
                    left_out.append(f"{relative}/ (deeper than {MAX_DEPTH} folders)")
            elif entry.is_file(follow_symlinks=False):
                shutil.copy2(entry.path, into, follow_symlinks=False)
            else:
                left_out.append(f"{relative} (not a regular file)")
    return left_out

"""``MemoryFiles``: MassGen's filesystem memory mode for the agents of a run, a part of the attempt
lifecycle.

Each agent with a workspace keeps ``memory/short_term/`` and ``memory/long_term/`` there. Before every
step its system prompt shows its memory files (``prompt``). After each step that decided, the files it
changed are recorded to long-term memory, when that is on for it, through the run's recorder: with the
agent's attribution and the turn and attempt in course, so turn-aware visibility holds for them as for
any record (another agent sees them from the next turn on, and only if their author won the attempt
that won). The ``ledger`` keeps a file from being recorded again while it is unchanged. When a turn is
answered the files are carried over (``carry``); what an agent is given that way is not recorded as
its own."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Protocol

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.events import Notice, RunEvent
from massgen_cli.memory.filesystem.folder import TIERS, MemoryFile, StatKey, ensure_tiers, read_tier
from massgen_cli.memory.filesystem.ledger import Entry, FileLedger
from massgen_cli.memory.filesystem.merge import merge_into_winner
from massgen_cli.memory.filesystem.prompt import (
    CONSOLIDATION,
    HEAD_BYTES,
    PEERS_SHORT_TERM_BYTES,
    SHORT_TERM_BYTES,
    PeerMemory,
    memory_section,
)
from massgen_cli.memory.longterm.record.memories import RecordMessage
from massgen_cli.messages import Message


class Recorder(Protocol):
    """Long-term memory as the mode records into it (the run's ``MemoryRuntime``)."""

    def records_for(self, agent_id: str) -> bool: ...

    def record(
        self,
        agent_id: str,
        messages: list[Message],
        *,
        reasoning: str = "",
        records: Sequence[RecordMessage] = (),
    ) -> None: ...


def file_record(file: MemoryFile) -> RecordMessage:
    """A memory file as long-term memory keeps it: its path and text, the file and tier named."""
    return {
        "role": "assistant",
        "content": f"{file.path}:\n{file.text.strip()}",
        "metadata": {"file": file.path, "kind": file.tier},
    }


class MemoryFiles:
    """The memory files of every agent with a workspace (see the module docstring)."""

    part_name: ClassVar[str] = "memory files"

    def __init__(
        self,
        workspaces: Mapping[str, Path],
        agent_ids: Sequence[str],
        emit: Callable[[RunEvent], None],
        recorder: Recorder | None = None,
        ledger: FileLedger | None = None,
    ):
        """``workspaces``: each agent's own (resolved) workspace; an agent without one keeps no memory
        files, which is said once. ``ledger``: what is recorded already (the session's)."""
        self.workspaces = {agent_id: workspaces[agent_id] for agent_id in agent_ids if agent_id in workspaces}
        self.emit = emit
        self.recorder = recorder
        self.ledger = ledger or FileLedger()
        self.at = AttemptAt(1)
        self.said: set[str] = set()
        if self.ledger.problem:
            self._warn(self.ledger.problem)
        for agent_id in agent_ids:
            if agent_id not in self.workspaces:
                self._warn(f"[{agent_id}] has no workspace (backend.cwd), so it keeps no memory files")

    def begin(self, at: AttemptAt) -> None:
        """The memory folders are made where missing."""
        self.at = at
        for agent_id, workspace in self.workspaces.items():
            try:
                ensure_tiers(workspace)
            except OSError as error:
                self._warn(f"[{agent_id}] the memory folders of {workspace} cannot be made: {error}")

    def section(self, agent_id: str, peers_view: Path | None = None) -> str:
        """What the agent's system prompt says of its memory files (and of its peers' as of their latest
        answers, found in ``peers_view``); "" without a workspace. Blocking: run it in a thread."""
        workspace = self.workspaces.get(agent_id)
        if workspace is None:
            return ""
        short_term = read_tier(workspace, "short_term", head=SHORT_TERM_BYTES + 1)
        long_term = read_tier(workspace, "long_term", head=HEAD_BYTES)
        for reason in [*short_term.skipped, *long_term.skipped]:
            self._warn(f"[{agent_id}] memory file not used: {reason}")
        peers = _peers(peers_view) if peers_view is not None else []
        return memory_section(short_term, long_term, peers, indexed=self._indexes(agent_id))

    def consolidation(self, agent_id: str) -> str:
        """What the winner is asked of its memory files when it presents the final answer."""
        return CONSOLIDATION if agent_id in self.workspaces else ""

    async def index(self, agent_id: str) -> None:
        """Record the agent's memory files that changed since they were recorded (or given to it)."""
        if not self._indexes(agent_id):
            return
        changed = await asyncio.to_thread(self._changed, agent_id)
        self.ledger.update(agent_id, _entries(changed, self.at.turn, self.at.attempt))
        records = [file_record(file) for file in changed if file.text.strip()]
        if records and self.recorder is not None:
            self.recorder.record(agent_id, [], records=records)

    def _changed(self, agent_id: str) -> list[MemoryFile]:
        """The agent's memory files whose content is not what the ledger holds."""
        known = self.ledger.known(agent_id)

        def unchanged(path: str, key: StatKey) -> bool:
            return path in known and known[path].stat_key == key

        return [
            file
            for tier in TIERS
            for file in read_tier(self.workspaces[agent_id], tier, unchanged=unchanged).files
            if file.path not in known or known[file.path].digest != _digest(file)
        ]

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """An answered turn: what the files hold now is recorded (the presentation may have written
        them), then they are carried over; a turn without an answer keeps them where they are."""
        if not outcome.answered:
            self.roll_back(outcome.at, whole_turn=True)
            return []
        for agent_id in self.workspaces:
            await self.index(agent_id)
        problems = []
        if outcome.winner in self.workspaces:
            problems = await asyncio.to_thread(merge_into_winner, self.workspaces, outcome.winner)
            for agent_id in self.workspaces:  # what the carry-over wrote is not the agents' own writing
                given = await asyncio.to_thread(self._changed, agent_id)
                self.ledger.update(agent_id, _entries(given))
        for problem in problems:
            self.emit(Notice("warning", problem))
        self._save()
        return problems

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """Files stay in the workspaces (they are the agents' own); what a rejected attempt (or a failed
        turn) recorded stays invisible to the others, and is recorded again by the next attempt."""
        self.ledger.forget(at.turn, None if whole_turn else at.attempt)
        self._save()

    def _save(self) -> None:
        try:
            self.ledger.save()
        except OSError as error:
            self._warn(f"the memory files ledger cannot be saved ({error}); a later run records them again")

    def _indexes(self, agent_id: str) -> bool:
        recorder = self.recorder
        return recorder is not None and agent_id in self.workspaces and recorder.records_for(agent_id)

    def _warn(self, message: str) -> None:
        """Said once per run."""
        if message not in self.said:
            self.said.add(message)
            self.emit(Notice("warning", message))


def _digest(file: MemoryFile) -> str:
    return hashlib.sha256(file.text.encode("utf-8")).hexdigest()


def _entries(files: list[MemoryFile], turn: int = 0, attempt: int = 0) -> dict[str, Entry]:
    """Ledger entries for ``files`` recorded in ``turn`` and ``attempt`` (0: given, not recorded)."""
    return {file.path: Entry(file.stat_key, _digest(file), turn, attempt) for file in files}


def _peers(view: Path) -> list[PeerMemory]:
    """The memory files of the peers whose latest snapshots lie in ``view`` (by their labels)."""
    try:
        labels = sorted(entry.name for entry in os.scandir(view) if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []
    peers = []
    for label in labels:
        folder = view / label
        short_term = read_tier(folder, "short_term", head=PEERS_SHORT_TERM_BYTES + 1)
        long_term = read_tier(folder, "long_term", head=HEAD_BYTES)
        peer = PeerMemory(label, folder, short_term, long_term)
        if peer.short_term.files or peer.long_term.files:
            peers.append(peer)
    return peers

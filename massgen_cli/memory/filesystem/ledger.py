"""What long-term memory already holds of each agent's memory files, so a file is recorded when its
author changes it and not at every step, nor when it is only carried over to an agent.

Each entry says when the agent recorded the file (its turn and attempt; 0 for a file carried over to
it, which it did not write). A rejected attempt's or a failed turn's entries are forgotten, so the next
attempt records the files again: its records are the ones that may win. The ledger is kept with the
session (``memory_files.json``), so a later run of the session does not record the same files again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from massgen_cli.errors import MassGenError
from massgen_cli.memory.filesystem.folder import StatKey
from massgen_cli.state import read_json, write_json

LEDGER_FILE = "memory_files.json"


@dataclass(frozen=True)
class Entry:
    """A file as it was recorded (or carried over): its ``StatKey``, its content's digest, and the turn
    and attempt that recorded it (0, 0: carried over)."""

    stat_key: StatKey
    digest: str
    turn: int = 0
    attempt: int = 0


class FileLedger:
    """Entries by agent and path; ``path`` None: kept for this run only."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self.entries: dict[str, dict[str, Entry]] = {}
        self.problem = ""
        if path is not None and path.is_file():
            try:
                self.entries = _entries(read_json(path, "memory files ledger"))
            except (MassGenError, AttributeError, TypeError, ValueError) as error:
                self.problem = f"the memory files ledger {path} is unusable ({error}); all are recorded again"

    def known(self, agent_id: str) -> Mapping[str, Entry]:
        return self.entries.get(agent_id, {})

    def update(self, agent_id: str, entries: Mapping[str, Entry]) -> None:
        self.entries.setdefault(agent_id, {}).update(entries)

    def forget(self, turn: int, attempt: int | None = None) -> None:
        """Forget what ``turn`` (only its ``attempt``, when given) recorded."""
        for entries in self.entries.values():
            for path, entry in list(entries.items()):
                if entry.turn == turn and attempt in (None, entry.attempt):
                    del entries[path]

    def save(self) -> None:
        if self.path is not None:
            rows = {agent: _rows(entries) for agent, entries in self.entries.items()}
            write_json(self.path, rows)


def _rows(entries: Mapping[str, Entry]) -> dict[str, tuple[Any, ...]]:
    return {path: astuple(entry) for path, entry in entries.items()}


def _entries(data: Any) -> dict[str, dict[str, Entry]]:
    return {
        str(agent): {
            str(path): Entry(_stat_key(key), str(digest), int(turn), int(attempt))
            for path, (key, digest, turn, attempt) in entries.items()
        }
        for agent, entries in data.items()
    }


def _stat_key(raw: Any) -> StatKey:
    inode, size, modified, changed = (int(number) for number in raw)
    return inode, size, modified, changed

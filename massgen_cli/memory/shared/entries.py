"""Scoped shared entries and session slots (TaskWeaver's design), persisted with the session.

An entry is ``{id, type, content, scope, agent_id}``: scope ``round`` lasts one turn, ``conversation``
the session. The latest entry of a type from the same agent is the one in effect; entries written in
a turn or attempt that failed, was cancelled or was restarted are rolled back with it (and an entry
they replaced is in effect again). Slots are entries of type ``slot:<name>``: the latest write wins,
whoever wrote it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from massgen_cli.config.memory import LifecycleConfig
from massgen_cli.memory.longterm.record.lifecycle import expired, expires_at
from massgen_cli.state import read_json, write_json

Scope = Literal["round", "conversation"]
SLOT_PREFIX = "slot:"
SHARED_FILE = "shared.json"


@dataclass(frozen=True)
class Entry:
    id: str
    type: str
    content: str
    scope: Scope
    agent_id: str
    turn: int
    attempt: int
    created_at: float
    expires_at: float | None

    @property
    def is_slot(self) -> bool:
        return self.type.startswith(SLOT_PREFIX)


class SharedEntries:
    """Every entry written in the session; what is in effect is computed, so rollbacks are exact."""

    def __init__(self, lifecycle: LifecycleConfig | None = None, path: Path | None = None):
        self.lifecycle = lifecycle or LifecycleConfig()
        self.path = path
        self.entries: list[Entry] = []
        self.version = 0

    def add(self, type_: str, content: str, scope: Scope, agent_id: str, turn: int, attempt: int) -> Entry:
        if scope not in ("round", "conversation"):
            raise ValueError(f"scope must be 'round' or 'conversation', not {scope!r}")
        level = "working" if scope == "round" else "session"
        now = time.time()
        entry = Entry(
            uuid.uuid4().hex,
            type_,
            content,
            scope,
            agent_id,
            turn,
            attempt,
            now,
            expires_at(level, self.lifecycle, now),
        )
        self.entries.append(entry)
        self.version += 1
        return entry

    def in_effect(self, turn: int, type_: str | None = None, now: float | None = None) -> list[Entry]:
        """Entries in effect in ``turn``: conversation ones and this turn's round ones, unexpired, the
        latest per (type, agent); slots the latest per name. Oldest first."""
        latest: dict[tuple[str, str], Entry] = {}
        for entry in self.entries:
            if (entry.scope == "round" and entry.turn != turn) or expired(entry.expires_at, now):
                continue
            owner = "" if entry.is_slot else entry.agent_id
            latest[(entry.type, owner)] = entry
        chosen = [e for e in latest.values() if type_ is None or e.type == type_]
        return sorted(chosen, key=lambda entry: entry.created_at)

    def slots(self, turn: int) -> dict[str, str]:
        return {e.type.removeprefix(SLOT_PREFIX): e.content for e in self.in_effect(turn) if e.is_slot}

    def roll_back(self, turn: int, attempt: int | None = None) -> int:
        """Forget what ``turn`` (or one attempt of it) wrote; returns how many entries went."""
        kept = [e for e in self.entries if not (e.turn == turn and (attempt is None or e.attempt == attempt))]
        removed = len(self.entries) - len(kept)
        if removed:
            self.entries, self.version = kept, self.version + 1
        return removed

    def save(self) -> None:
        if self.path is None:
            return
        write_json(self.path, [asdict(e) for e in self.entries])

    @classmethod
    def load(
        cls, session_dir: Path, lifecycle: LifecycleConfig | None = None, *, saved: bool = True
    ) -> SharedEntries:
        """The entries saved in ``session_dir``; with ``saved`` False they are read but never written."""
        path = session_dir / SHARED_FILE
        shared = cls(lifecycle, path if saved else None)
        if path.is_file():
            data: list[dict[str, Any]] = read_json(path, "shared entries")
            shared.entries = [Entry(**item) for item in data]
        return shared

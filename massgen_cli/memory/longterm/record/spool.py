"""The spool: what long-term memory could not take (the store would not open, or a write kept failing),
kept as JSON lines under the state folder until a run that can writes it. Nothing is silently lost.

Two kinds of line: a record (``{"messages", "context"}``) and the winner of a turn (``{"winner"}``),
which decides who may see the records of that turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage


@dataclass(frozen=True)
class WinnerMark:
    session_id: str
    turn: int
    agent_id: str
    attempt: int | None = None


@dataclass
class Kept:
    """What a spool held, oldest first."""

    records: list[tuple[list[RecordMessage], RecordContext]] = field(default_factory=list)
    winners: list[WinnerMark] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.records) + len(self.winners)


class Spool:
    """``<state>/memory/spool.jsonl``: one record or winner mark per line."""

    def __init__(self, path: Path, on_lost: Callable[[str], None] = lambda message: None):
        """``on_lost`` hears of what could not be kept either (the state folder refused the write)."""
        self.path = path
        self.on_lost = on_lost

    def keep(self, messages: list[RecordMessage], context: RecordContext) -> None:
        self._append({"messages": messages, "context": asdict(context)})

    def keep_winner(self, mark: WinnerMark) -> None:
        self._append({"winner": asdict(mark)})

    def _append(self, item: dict[str, Any]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as spool:
                spool.write(json.dumps(item, ensure_ascii=False) + "\n")
        except OSError as error:
            what = "the winner of a turn" if "winner" in item else "a memory record"
            self.on_lost(f"{what} could not be kept in {self.path} either ({error}); it is lost")

    def take(self) -> Kept:
        """Everything kept; the file is emptied (what fails again is kept again). A line that cannot be
        read stays in ``<spool>.damaged`` rather than vanish."""
        kept = Kept()
        if not self.path.is_file():
            return kept
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        self.path.unlink()
        damaged = []
        for line in filter(None, lines):
            try:
                item: dict[str, Any] = json.loads(line)
                if "winner" in item:
                    kept.winners.append(WinnerMark(**item["winner"]))
                else:
                    kept.records.append((list(item["messages"]), RecordContext(**item["context"])))
            except (ValueError, KeyError, TypeError):
                damaged.append(line)
        if damaged:
            with self.path.with_suffix(".damaged").open("a", encoding="utf-8") as file:
                file.write("\n".join(damaged) + "\n")
        return kept

"""The spool: what long-term memory could not take (the store would not open, or a write kept failing),
kept as JSON lines under the state folder until a run that can writes it. Nothing is silently lost.

Two kinds of line: a record (``{"messages", "context"}``) and the winner of a turn (``{"winner"}``),
which decides who may see the records of that turn."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

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
    set_aside: int = 0
    """Lines that could not be read (cut short, not JSON, not a record): moved to ``<spool>.damaged``."""

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

    @property
    def damaged_path(self) -> Path:
        """Where lines that cannot be read are set aside (``spool.damaged``), never deleted."""
        return self.path.with_suffix(".damaged")

    def _append(self, item: dict[str, Any]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as spool:
                spool.write(_line_start(spool) + json.dumps(item, ensure_ascii=False).encode() + b"\n")
        except OSError as error:
            what = "the winner of a turn" if "winner" in item else "a memory record"
            self.on_lost(f"{what} could not be kept in {self.path} either ({error}); it is lost")

    def take(self) -> Kept:
        """Everything kept; the file is emptied (what fails again is kept again). A line that cannot be
        read is appended to ``damaged_path`` before the spool goes, rather than vanish; ``set_aside``
        counts them."""
        kept = Kept()
        if not self.path.is_file():
            return kept
        damaged = []
        for line in filter(None, self.path.read_text(encoding="utf-8", errors="replace").splitlines()):
            if not _read_line(line, kept):
                damaged.append(line)
        if damaged:
            with self.damaged_path.open("a", encoding="utf-8") as file:
                file.write("\n".join(damaged) + "\n")
        self.path.unlink()
        kept.set_aside = len(damaged)
        return kept


def _line_start(spool: BinaryIO) -> bytes:
    """A newline when the file ends in a line cut short (a process killed mid-write, a full disk), so
    the next line is not glued to it and set aside with it."""
    end = spool.seek(0, io.SEEK_END)
    if end == 0:
        return b""
    spool.seek(end - 1)
    return b"" if spool.read(1) == b"\n" else b"\n"


def _read_line(line: str, kept: Kept) -> bool:
    """Add what ``line`` holds to ``kept``; False when it is not a record or a winner mark."""
    try:
        item: dict[str, Any] = json.loads(line)
        if "winner" in item:
            kept.winners.append(WinnerMark(**item["winner"]))
        else:
            kept.records.append((list(item["messages"]), RecordContext(**item["context"])))
    except (ValueError, KeyError, TypeError):
        return False
    return True

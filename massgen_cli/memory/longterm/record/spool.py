"""The spool: what long-term memory could not take (the store would not open, or a write kept failing),
kept as JSON lines under the state folder until a run that can writes it. Nothing is silently lost.

Two kinds of line: a record (``{"messages", "context", "target"}``) and the winner of a turn
(``{"winner"}``), which decides who may see the records of that turn. A record's target is the store,
domain and task type it was meant for: only a run with that store and those keys writes it (a run with
another config leaves it waiting); lines written before targets were kept go to the first run that can
write."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage

SPOOL_NAME = "spool.jsonl"
"""The spool's file in the state folder's ``memory`` folder."""


@dataclass(frozen=True)
class WinnerMark:
    session_id: str
    turn: int
    agent_id: str
    attempt: int | None = None


@dataclass(frozen=True)
class SpoolTarget:
    """Where a record was meant to go: a vector store (as ``store_identity`` names it) and the domain and
    task type its key is made with."""

    store: str
    domain: str
    task_type: str

    def __str__(self) -> str:
        return f"{self.store} (domain {self.domain}, task type {self.task_type})"


@dataclass
class Kept:
    """What a spool held, oldest first."""

    records: list[tuple[list[RecordMessage], RecordContext]] = field(default_factory=list)
    winners: list[WinnerMark] = field(default_factory=list)
    set_aside: int = 0
    """Lines that could not be read (cut short, not JSON, not a record): moved to ``<spool>.damaged``."""
    waiting: Counter[SpoolTarget] = field(default_factory=Counter)
    """Records left in the spool for other stores, by target."""

    def __len__(self) -> int:
        return len(self.records) + len(self.winners)


class Spool:
    """``<state>/memory/spool.jsonl``: one record or winner mark per line."""

    def __init__(
        self, path: Path, target: SpoolTarget, on_lost: Callable[[str], None] = lambda message: None
    ):
        """``target``: the store this run writes to (its records are kept for it, and only records for
        it are taken); ``on_lost`` hears of what could not be kept either (the state folder refused)."""
        self.path = path
        self.target = target
        self.on_lost = on_lost

    def keep(self, messages: list[RecordMessage], context: RecordContext) -> None:
        self._append({"messages": messages, "context": asdict(context), "target": asdict(self.target)})

    def keep_winner(self, mark: WinnerMark) -> None:
        self._append({"winner": asdict(mark)})

    @property
    def damaged_path(self) -> Path:
        """Where lines that cannot be read are set aside (``spool.damaged``), never deleted."""
        return self.path.with_suffix(".damaged")

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """The spool to this process alone (``spool.lock``, beside it): a line another process appends
        while a run takes the spool would otherwise land in the file being replaced, and be lost."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.with_suffix(".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _append(self, item: dict[str, Any]) -> None:
        try:
            with self._held(), self.path.open("a+b") as spool:
                spool.write(_line_start(spool) + json.dumps(item, ensure_ascii=False).encode() + b"\n")
        except OSError as error:
            what = "the winner of a turn" if "winner" in item else "a memory record"
            self.on_lost(f"{what} could not be kept in {self.path} either ({error}); it is lost")

    def take(self) -> Kept:
        """Everything kept for this run's target (and winner marks, and records from before targets);
        records for other targets stay in the spool, counted in ``waiting``. A line that cannot be read
        is appended to ``damaged_path`` rather than vanish; ``set_aside`` counts them."""
        kept = Kept()
        if not self.path.is_file():
            return kept
        with self._held():
            self._take_into(kept)
        return kept

    def _take_into(self, kept: Kept) -> None:
        if not self.path.is_file():  # another run took it meanwhile
            return
        damaged, others = [], []
        for line in filter(None, self.path.read_text(encoding="utf-8", errors="replace").splitlines()):
            target = _read_line(line, kept, self.target)
            if target is False:
                damaged.append(line)
            elif isinstance(target, SpoolTarget):
                others.append(line)
                kept.waiting[target] += 1
        if damaged:
            with self.damaged_path.open("a", encoding="utf-8") as file:
                file.write("\n".join(damaged) + "\n")
        self._leave(others)
        kept.set_aside = len(damaged)

    def refile(self, session_id: str, turns: Mapping[int, int]) -> int:
        """Records and winner marks of ``session_id`` kept under a turn number that the memory server has
        since given another (``turns``: old number to new) are filed under the new one; how many."""
        if not turns or not self.path.is_file():
            return 0
        with self._held():
            if not self.path.is_file():
                return 0
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
            refiled = [_refiled(line, session_id, turns) for line in filter(None, lines)]
            changed = sum(line != old for line, old in zip(refiled, filter(None, lines), strict=True))
            if changed:
                self._leave(refiled)
        return changed

    def waiting(self) -> Counter[SpoolTarget]:
        """How many records wait in the spool, by target (read only; records from before targets were
        kept count for this spool's target)."""
        waiting: Counter[SpoolTarget] = Counter()
        if not self.path.is_file():
            return waiting
        for line in filter(None, self.path.read_text(encoding="utf-8", errors="replace").splitlines()):
            target = _read_line(line, Kept(), None)
            if isinstance(target, SpoolTarget):
                waiting[target] += 1
            elif target is None and '"messages"' in line:
                waiting[self.target] += 1
        return waiting

    def _leave(self, lines: list[str]) -> None:
        """The spool holds just ``lines`` now (replaced at once, so a crash leaves the old or the new)."""
        if not lines:
            self.path.unlink()
            return
        fresh = self.path.with_suffix(f".{os.getpid()}.new")
        fresh.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(fresh, self.path)


def waiting_notice(count: int, target: SpoolTarget, spool: Path) -> str:
    """What a run or a ``memory`` command says of records that wait in ``spool`` for another store."""
    return (
        f"{count} memory record(s) in {spool} wait for {target}: they are written by a run whose config "
        "uses that store, domain and task type"
    )


def _line_start(spool: BinaryIO) -> bytes:
    """A newline when the file ends in a line cut short (a process killed mid-write, a full disk), so
    the next line is not glued to it and set aside with it."""
    end = spool.seek(0, io.SEEK_END)
    if end == 0:
        return b""
    spool.seek(end - 1)
    return b"" if spool.read(1) == b"\n" else b"\n"


def _refiled(line: str, session_id: str, turns: Mapping[int, int]) -> str:
    """``line`` with its turn renumbered when it is a record or winner mark of ``session_id`` under one of
    ``turns``; any other line (another session's, one that cannot be read) as it is."""
    try:
        item: dict[str, Any] = json.loads(line)
        kept = item["winner"] if "winner" in item else item["context"]
        if kept.get("session_id") != session_id or kept.get("turn") not in turns:
            return line
    except (ValueError, KeyError, TypeError, AttributeError):
        return line
    kept["turn"] = turns[kept["turn"]]
    return json.dumps(item, ensure_ascii=False)


def _read_line(line: str, kept: Kept, wanted: SpoolTarget | None) -> SpoolTarget | bool | None:
    """Add what ``line`` holds to ``kept`` when it is a winner mark or a record for ``wanted`` (or for
    no particular target); return the other target of a record left out, False for a line that is not
    a record or a winner mark, else None."""
    try:
        item: dict[str, Any] = json.loads(line)
        if "winner" in item:
            kept.winners.append(WinnerMark(**item["winner"]))
            return None
        record = (list(item["messages"]), RecordContext(**item["context"]))
        target = SpoolTarget(**item["target"]) if item.get("target") else None
    except (ValueError, KeyError, TypeError):
        return False
    if target is not None and target != wanted:
        return target
    kept.records.append(record)
    return None

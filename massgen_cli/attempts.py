"""The attempt lifecycle that every part with state in a turn follows.

A turn runs one or more attempts (a post-evaluation restart starts a new one). Parts whose state belongs
to an attempt (shared memory, workspace snapshots, long-term memory) implement ``AttemptPart`` and sit in
one list that the turn walks: ``begin`` as an attempt starts, ``roll_back`` when the attempt is rejected
or the turn fails or is cancelled, ``commit`` when the turn ends with its outcome. A part that is off is
simply not in the list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol


@dataclass(frozen=True)
class Vote:
    """``voter`` chose ``target`` (both real agent ids)."""

    voter: str
    target: str
    reason: str = ""


@dataclass(frozen=True)
class AttemptAt:
    """Which attempt of which turn, and its log folder (None when nothing is logged)."""

    turn: int
    attempt: int = 1
    log_dir: Path | None = None
    numbered_offline: bool = False
    """The turn's number is this state folder's own, taken while the memory server that keeps the session
    could not be reached: what is recorded under it waits to be filed under the number the server gives."""


@dataclass(frozen=True)
class TurnOutcome:
    """How a turn ended, as its last attempt left it."""

    at: AttemptAt
    winner: str | None
    final_answer: str | None
    answers: Mapping[str, str]
    votes: Sequence[Vote] = ()

    @property
    def answered(self) -> bool:
        return self.winner is not None and self.final_answer is not None

    def votes_line(self) -> str:
        """``a→b, b→b`` (empty without votes)."""
        return ", ".join(f"{vote.voter}→{vote.target}" for vote in self.votes)


class AttemptPart(Protocol):
    """A part of the run whose changes belong to an attempt."""

    part_name: ClassVar[str]
    """What the part is, for a line saying its save failed."""

    def begin(self, at: AttemptAt) -> None:
        """An attempt starts."""

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """The turn ended: keep what its outcome answered (a turn without an answer keeps nothing of its
        own, as if rolled back). Returns the problems met (memory failures), never raises for them."""
        ...

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """Undo the attempt's changes (it was rejected), or the whole turn's (it failed or was cancelled)."""

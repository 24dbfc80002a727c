"""What a server keeps of a run once it is over: its question, how it ended, its winner and answer (cut
short: the report holds it whole) and the name of its log folder (its report). The live view lists
these after a reload; the run log is the record, this the index of the ones this server ran."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from massgen_cli.text import one_line

if TYPE_CHECKING:
    from massgen_cli.serve.runs import Ended, LiveRun

FINISHED_KEPT = 200
"""The most finished runs a server keeps (the oldest go first; their logs stay)."""
ANSWER_CHARS = 4000
"""The most characters of an answer kept here."""
RunState = Literal["answered", "no answer", "failed", "cancelled"]


@dataclass(frozen=True)
class FinishedRun:
    """One run this server ran to its end (``owner``: its tenant, None without tenants)."""

    id: str
    owner: str | None
    model: str
    question: str
    session_id: str | None
    started: float
    ended: float
    state: RunState
    winner: str | None
    answer: str
    reason: str
    report: str | None
    """Its log folder's name (``/runs/past/<report>``), None when it wrote no log."""

    def fields(self) -> dict[str, Any]:
        """As ``/runs`` lists it: every field but its tenant."""
        return {name: value for name, value in vars(self).items() if name != "owner"}


def finished_run(run: LiveRun, ended: Ended) -> FinishedRun:
    """What is kept of ``run``, which ended as ``ended`` says."""
    result = ended.result
    answer = result.final_answer if result is not None else None
    return FinishedRun(
        id=run.id,
        owner=run.owner,
        model=run.ask.model,
        question=one_line(run.ask.question, 300),
        session_id=run.app.session.id if run.app is not None else run.ask.session_id,
        started=run.started,
        ended=time.time(),
        state=run_state(ended),
        winner=result.winner if result is not None and answer is not None else None,
        answer=_cut(answer or ""),
        reason=_reason(ended),
        report=run.app.run_log.directory.name if run.app is not None and run.app.run_log.written else None,
    )


def run_state(ended: Ended) -> RunState:
    if ended.cancelled:
        return "cancelled"
    if ended.error is not None or ended.result is None:
        return "failed"
    return "answered" if ended.result.final_answer is not None else "no answer"


def _reason(ended: Ended) -> str:
    if ended.error is not None:
        return one_line(str(ended.error), 400)
    if ended.result is not None:
        return one_line(ended.result.end_reason, 400)
    return "cancelled"


def _cut(text: str) -> str:
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1] + "…"

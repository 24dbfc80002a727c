"""A finished run told again, from what the server keeps: its run log's events (``events.jsonl`` of each
attempt) in the form the live view hears them, each with when it happened, between the server's own
``Opened`` and ``Ended``. The page shows a run it asked for that ended before it looked, and any run it
reopens after a reload, as it showed the live one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from massgen_cli.events_json import event_to_dict
from massgen_cli.runlogs.reader import Run, run_folder
from massgen_cli.serve.finished import FinishedRun

ENDED_STATUS = {"answered": "ended", "no answer": "ended", "failed": "failed", "cancelled": "cancelled"}


def told_again(state_dir: Path, run: FinishedRun) -> list[dict[str, Any]]:
    """What the page hears of ``run``, as it was logged."""
    said: list[dict[str, Any]] = [{"type": "Opened", "session_id": run.session_id, "at": 0.0}]
    folder = run_folder(state_dir, run.report) if run.report else None
    for record in Run(folder).attempts if folder is not None else []:
        for logged in record.events:
            at = logged.time.timestamp() - run.started if logged.time is not None else None
            said.append({**event_to_dict(logged.event), "at": None if at is None else round(max(at, 0.0), 3)})
    status = ENDED_STATUS[run.state]
    error = run.reason if status == "failed" else ""
    said.append({"type": "Ended", "status": status, "error": error, "at": round(run.ended - run.started, 3)})
    return said

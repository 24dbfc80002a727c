"""Finding and reading run logs: ``<state>/massgen_logs/log_<ts>/turn_<N>/attempt_<M>/`` with
``events.jsonl``, ``summary.json`` and ``requests/<agent>_<NNN>.json`` (see ``massgen_cli.runlogs.writer``).

Logs are read as they are: an attempt cut short has no summary, a process that was killed may have left
half a line, and an older log lacks what later versions add. None of that stops the others being read.
Each line of ``events.jsonl`` is read back into the event it was written from (``event_from_dict``); a
line that is none (damaged, or of a type this version does not know) is left out and counted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from massgen_cli.errors import UsageError
from massgen_cli.events import RunEvent
from massgen_cli.events_json import event_from_dict
from massgen_cli.runlogs import shapes

LOGS_FOLDER = "massgen_logs"
RUN_PREFIX = "log_"
STAMP_FORMAT = "%Y%m%d_%H%M%S_%f"
_TURN = re.compile(r"^turn_(\d+)$")
_ATTEMPT = re.compile(r"^attempt_(\d+)$")
_REQUEST = re.compile(r"^(.+)_(\d{3,})\.json$")


def moment(stamp: str) -> datetime | None:
    """The time of a ``YYYYMMDD_HHMMSS_ffffff`` stamp (None when it is not one)."""
    try:
        return datetime.strptime(stamp, STAMP_FORMAT)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class LoggedEvent:
    """One line of ``events.jsonl``: the event, when it was written (None when the line has no readable
    time), and the session it belongs to."""

    event: RunEvent
    time: datetime | None
    session_id: str | None


class RequestRecord:
    """One request an agent sent (``requests/<agent>_<NNN>.json``): when, and for what."""

    def __init__(self, path: Path, agent_id: str, number: int):
        self.path = path
        self.agent_id = agent_id
        self.number = number
        data = _json_file(path)
        data = data if isinstance(data, dict) else {}
        self.purpose = str(data.get("purpose") or "coordination")
        self.time = moment(str(data.get("time", ""))) or datetime.fromtimestamp(path.stat().st_mtime)
        """Logs written before requests carried their time are timed by the file's modification."""


class AttemptRecord:
    """One attempt's folder; what it holds is read when first asked for."""

    def __init__(self, folder: Path, turn: int, attempt: int):
        self.folder = folder
        self.turn = turn
        self.attempt = attempt

    @cached_property
    def summary(self) -> dict[str, Any] | None:
        """``summary.json``, each known field of its type or left out (``shapes``); None when the attempt
        never got that far (a killed process)."""
        data = _json_file(self.folder / "summary.json")
        return shapes.summary(data) if isinstance(data, dict) else None

    @cached_property
    def events(self) -> list[LoggedEvent]:
        """The events of ``events.jsonl``, in order."""
        return [event for event in self._lines if event is not None]

    @property
    def unreadable_lines(self) -> int:
        """How many lines of ``events.jsonl`` were left out: damaged, or no event this version knows."""
        return sum(event is None for event in self._lines)

    @cached_property
    def _lines(self) -> list[LoggedEvent | None]:
        try:
            lines = (self.folder / "events.jsonl").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        return [_logged_event(line) for line in lines if line.strip()]

    @cached_property
    def requests(self) -> list[RequestRecord]:
        """The requests sent, in the order of their numbers (per agent)."""
        found = []
        for path in sorted((self.folder / "requests").glob("*.json")):
            match = _REQUEST.match(path.name)
            if match:
                agent_id = shapes.without_surrogates(match.group(1))  # a name's undecodable bytes
                found.append(RequestRecord(path, agent_id, int(match.group(2))))
        return found

    @property
    def question(self) -> str:
        return str((self.summary or {}).get("question") or "")

    @property
    def status(self) -> str:
        """``answered``, ``failed``, ``cancelled``, or ``unfinished`` (no summary: killed, or running)."""
        if self.summary is None:
            return "unfinished"
        if self.summary.get("final_answer") is not None:
            return "answered"
        return "cancelled" if str(self.summary.get("end_reason", "")).startswith("cancelled") else "failed"


class Run:
    """The log folder of one process: its attempts, turn by turn."""

    def __init__(self, folder: Path):
        self.folder = folder

    @property
    def name(self) -> str:
        return self.folder.name

    @cached_property
    def attempts(self) -> list[AttemptRecord]:
        """Every attempt, by turn and then by attempt number."""
        found = [
            AttemptRecord(attempt_dir, int(turn.group(1)), int(attempt.group(1)))
            for turn_dir in _children(self.folder)
            if (turn := _TURN.match(turn_dir.name))
            for attempt_dir in _children(turn_dir)
            if (attempt := _ATTEMPT.match(attempt_dir.name))
        ]
        return sorted(found, key=lambda record: (record.turn, record.attempt))

    @property
    def turns(self) -> list[AttemptRecord]:
        """The last attempt of each turn: the one that tells how the turn ended."""
        last: dict[int, AttemptRecord] = {}
        for record in self.attempts:
            last[record.turn] = record
        return list(last.values())

    @cached_property
    def session_id(self) -> str | None:
        for record in self.attempts:
            if record.summary and record.summary.get("session_id"):
                return str(record.summary["session_id"])
            first = next(iter(record.events), None)
            if first and first.session_id:
                return first.session_id
        return None

    @property
    def started(self) -> datetime | None:
        return moment(self.name.removeprefix(RUN_PREFIX))


def logs_root(state_dir: Path) -> Path:
    return state_dir / LOGS_FOLDER


RUN_NAME = re.compile(r"log_\d{8}_\d{6}_\d{6}")
"""A run log folder's name, as ``writer.RunLog`` makes it."""


def run_folder(state_dir: Path, name: str) -> Path | None:
    """The run log folder ``name`` names under the state folder's log root, or None: only a folder of a
    run log's name directly in the root, never a link, a path or a name that climbs out (a session record
    is a file anything with the state folder's access can rewrite)."""
    if not RUN_NAME.fullmatch(name):
        return None
    folder = logs_root(state_dir) / name
    return folder if folder.is_dir() and not folder.is_symlink() else None


def all_runs(state_dir: Path) -> list[Run]:
    """Every run under the state folder, newest first."""
    folders = [path for path in _children(logs_root(state_dir)) if path.name.startswith(RUN_PREFIX)]
    return [Run(folder) for folder in sorted(folders, key=lambda path: path.name, reverse=True)]


def find_runs(state_dir: Path, target: str | None) -> list[Run]:
    """The runs ``target`` names, oldest first: a log folder (``log_<ts>``, or a path to one or into
    one), a session id (all its runs), or, when None, the latest run. A ``UsageError`` says what exists."""
    if target is None:
        runs = all_runs(state_dir)
        if not runs:
            raise UsageError(f"no run logs under {logs_root(state_dir)} yet; ask a question first")
        return [runs[0]]
    path = Path(target).expanduser()
    if path.is_dir() and (folder := _run_folder(path)) is not None:
        return [Run(folder)]
    if names_a_run(target):
        folder = logs_root(state_dir) / target
        if not folder.is_dir():
            raise UsageError(
                f"no run log {target} under {logs_root(state_dir)}; `massgen logs list` shows them"
            )
        return [Run(folder)]
    runs = [run for run in all_runs(state_dir) if run.session_id == target]
    if not runs:
        raise UsageError(
            f"{target!r} is neither a run log nor a session with logs under {state_dir}; "
            "`massgen logs list` shows both"
        )
    return runs[::-1]


def names_a_run(target: str | None) -> bool:
    """Whether ``target`` names one run (the latest, a log folder or a path), not a session."""
    if target is None or (target.startswith(RUN_PREFIX) and "/" not in target):
        return True
    path = Path(target).expanduser()
    return path.is_dir() and _run_folder(path) is not None


def _run_folder(path: Path) -> Path | None:
    """The run folder ``path`` is, or is inside (a turn's or an attempt's folder)."""
    for candidate in [path.resolve(), *path.resolve().parents]:
        if candidate.name.startswith(RUN_PREFIX) or any(_TURN.match(p.name) for p in _children(candidate)):
            return candidate
    return None


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(path for path in folder.iterdir() if path.is_dir())
    except OSError:
        return []


def _json_file(path: Path) -> Any:
    try:
        return shapes.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError):
        return None


def _logged_event(line: str) -> LoggedEvent | None:
    """The event a line holds, or None when it holds none."""
    try:
        data = shapes.loads(line)
        event = event_from_dict(_as_written_now(data)) if isinstance(data, dict) else None
    except ValueError:  # not JSON (its errors are ValueErrors), or no event of this vocabulary
        return None
    if event is None:
        return None
    session_id = data.get("session_id")
    return LoggedEvent(
        event, moment(str(data.get("time", ""))), session_id if isinstance(session_id, str) else None
    )


def _as_written_now(data: dict[str, Any]) -> dict[str, Any]:
    """A line as this version writes it. Logs written before votes had an event of their own said a vote
    as an ``AgentStatus`` ``voted`` whose detail was ``target: reason``: such a line is a ``VoteCast``."""
    if data.get("type") != "AgentStatus" or data.get("status") != "voted":
        return data
    target, _, reason = str(data.get("detail", "")).partition(": ")
    return {**data, "type": "VoteCast", "voter": data.get("agent_id"), "target": target, "reason": reason}

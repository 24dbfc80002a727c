"""Run logs: one ``massgen_logs/log_<ts>/`` per process, ``turn_<N>/attempt_<M>/`` inside.

An attempt folder holds ``events.jsonl`` (one typed event per line), ``requests/<agent>_<NNN>.json``
(each request sent to a backend, secrets redacted) and ``summary.json``.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from massgen_cli.events import CommandOutput, Notice, RunEvent, StreamEvent
from massgen_cli.events_json import event_to_dict
from massgen_cli.redaction import redact
from massgen_cli.state import timestamp

EARLY_EVENTS = 200
"""The most events said before the first attempt (the run's start) kept for its log."""


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(redact(data), indent=2, ensure_ascii=False, default=str), encoding="utf-8")


def event_line(event: RunEvent | StreamEvent, **context: Any) -> str:
    """An event as one line of ``events.jsonl`` (and of ``--stream-events``): its time, the ``context``
    (session and turn), its type and fields, secrets redacted."""
    record = {"time": timestamp(), **context, **event_to_dict(event)}
    return json.dumps(redact(record), ensure_ascii=False, default=str)


class AttemptLog:
    """The log folder of one attempt of one turn. A write the disk refuses turns this log off and is said
    once (``on_failure``); the run goes on."""

    def __init__(self, directory: Path, on_failure: Callable[[str], None]):
        self.directory = directory
        self.on_failure = on_failure
        self.failed = False
        self._request_numbers: Counter[str] = Counter()
        self._events: TextIO | None = None
        self._guarded(self._open)

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._events = (self.directory / "events.jsonl").open("a", encoding="utf-8")

    def _guarded(self, write: Callable[[], None]) -> None:
        if self.failed:
            return
        try:
            write()
        except OSError as error:
            self.failed = True
            self.on_failure(f"the run log at {self.directory} stopped: {error}")

    def event(self, event: RunEvent | StreamEvent, **context: Any) -> None:
        line = event_line(event, **context)

        def write() -> None:
            assert self._events is not None
            self._events.write(line + "\n")
            self._events.flush()

        self._guarded(write)

    def request(self, agent_id: str, payload: dict[str, Any]) -> Path:
        """Keep a request as it goes out, with its ``time`` (where the report's step starts)."""
        self._request_numbers[agent_id] += 1
        path = self.directory / "requests" / f"{agent_id}_{self._request_numbers[agent_id]:03d}.json"
        self._guarded(lambda: write_json(path, {"time": timestamp(), **payload}))
        return path

    def summary(self, data: dict[str, Any]) -> None:
        self._guarded(lambda: write_json(self.directory / "summary.json", data))

    def close(self) -> None:
        if self._events is not None:
            with contextlib.suppress(OSError):
                self._events.close()


class RunLog:
    """The log folder of one process (created on first use). It listens to the run's events and writes
    each to the open attempt's ``events.jsonl``; a write the disk refuses is said through ``report``."""

    def __init__(
        self,
        state_dir: Path,
        session_id: str,
        *,
        enabled: bool,
        report: Callable[[RunEvent], None],
        on_open: Callable[[Path], None] | None = None,
    ):
        self.enabled = enabled
        self.session_id = session_id
        self.directory = state_dir / "massgen_logs" / f"log_{timestamp()}"
        self.report = report
        self.on_open = on_open
        """Told the run's folder once, as its first attempt opens (the session lists its runs' logs)."""
        self.turn = 0
        self.current: AttemptLog | None = None
        self.early: list[RunEvent] = []
        self.opened_once = False

    @property
    def written(self) -> bool:
        """Whether this run wrote a log (its folder exists)."""
        return self.enabled and self.directory.is_dir()

    def open_attempt(self, turn: int, attempt: int) -> AttemptLog | None:
        """The attempt's log, which the events go to until ``close_attempt``."""
        self.turn = turn
        if self.enabled:
            first = not self.opened_once  # the folder may exist already (a status file in it)
            folder = self.directory / f"turn_{turn}" / f"attempt_{attempt}"
            self.current = AttemptLog(folder, self._stopped)
            if first and self.on_open is not None:
                self._tell_opened(self.on_open)
        self.opened_once = True
        early, self.early = self.early, []
        for event in early:
            self(event)
        return self.current

    def _tell_opened(self, on_open: Callable[[Path], None]) -> None:
        try:
            on_open(self.directory)
        except OSError as error:
            self.report(Notice("degraded", f"the session could not list its log {self.directory}: {error}"))

    def close_attempt(self, summary: dict[str, Any] | None) -> None:
        """Write the attempt's ``summary.json`` (when it got that far) and close its log."""
        log, self.current = self.current, None
        if log is not None:
            if summary is not None:
                log.summary(summary)
            log.close()

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, CommandOutput):  # live lines for the views; the tool's result keeps them all
            return
        if self.current is not None:
            self.current.event(event, session_id=self.session_id, turn=self.turn)
        elif not self.opened_once and len(self.early) < EARLY_EVENTS:
            self.early.append(event)  # the run's start (MCP servers starting): the first attempt's log

    def _stopped(self, message: str) -> None:
        self.report(Notice("degraded", message))

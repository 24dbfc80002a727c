"""What a script reads of a run: ``--automation`` (no live view or progress, the log folder named on the
first lines of stdout, ``status.json`` kept current in it, MassGen's exit codes), ``--stream-events``
(every event as a JSON line on stdout, the final answer last) and ``--output-file`` (the final answer
written to a file too)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from massgen_cli.answer_out import to_devnull
from massgen_cli.cli.signals import TERMINATED
from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.events import FinalAnswer, Notice, RunEvent, TurnEnded
from massgen_cli.runlogs.status import StatusFile
from massgen_cli.runlogs.writer import event_line

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp
    from massgen_cli.config.schema import MassGenConfig

EXIT_SUCCESS, EXIT_CONFIG_ERROR, EXIT_EXECUTION_ERROR, EXIT_TIMEOUT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4
"""MassGen's exit codes in automation mode: answered; config or usage error; the run failed; the turn
reached its time limit without an answer; interrupted (Ctrl-C or SIGTERM)."""
_AUTOMATION_CODES = {0: EXIT_SUCCESS, 2: EXIT_CONFIG_ERROR, 1: EXIT_EXECUTION_ERROR, 130: 4, 143: 4}
_REASONS = {EXIT_SUCCESS: "completed", EXIT_TIMEOUT: "timeout", EXIT_INTERRUPTED: "interrupted"}
STATUS_FILE = "status.json"


def automation_code(code: int) -> int:
    """The exit code an automated run ends with, for the code it would end with otherwise (0 answered,
    1 runtime failure, 2 usage or config error, 130/143 interrupted)."""
    return _AUTOMATION_CODES.get(code, code)


class TurnTimedOut(MassGenError):
    """An automated run's turn reached its time limit without an answer."""

    exit_code = EXIT_TIMEOUT


@contextlib.contextmanager
def automation_exit_codes() -> Iterator[None]:
    """The command inside ends with MassGen's automation exit codes (see ``automation_code``)."""
    import typer

    try:
        yield
    except typer.Exit as ended:
        raise typer.Exit(automation_code(ended.exit_code)) from None


def exit_code_of(error: BaseException) -> int:
    """The exit code ``error`` ends the command with (as ``guard.guarded`` maps it)."""
    if isinstance(error, MassGenError):
        return error.exit_code
    if isinstance(error, KeyboardInterrupt):
        return 143 if TERMINATED.is_set() else 130
    return 1


def watched(outputs: Outputs, run: Callable[[RunWatch], int]) -> int:
    """``run`` with a ``RunWatch`` serving ``outputs``, finished with the exit code (its failure's too)."""
    watch = RunWatch(outputs)
    try:
        code = run(watch)
    except BaseException as error:
        watch.finish(exit_code_of(error), error)
        raise
    return watch.finish(code)


@dataclass(frozen=True)
class Outputs:
    """Where a run's results go besides the console: the flags ``--automation``, ``--stream-events``
    (which implies ``--automation``, as in MassGen) and ``--output-file``."""

    automation: bool = False
    stream_events: bool = False
    output_file: Path | None = None

    @property
    def automated(self) -> bool:
        return self.automation or self.stream_events

    def check(self, question: str | None) -> None:
        """Usage errors, before anything starts."""
        if self.automated and question is None:
            flag = "--stream-events" if self.stream_events else "--automation"
            raise UsageError(f'{flag} runs one question: give it as an argument (massgen {flag} "...")')
        if self.output_file is not None and self.output_file.is_dir():
            raise UsageError(f"--output-file {self.output_file} is a folder; give a file's path")


class RunWatch:
    """The listener that serves ``Outputs`` during a run: attached once the app is built (``attach``),
    finished once the command's exit code is known (``finish``)."""

    def __init__(self, outputs: Outputs):
        self.outputs = outputs
        self.final: FinalAnswer | None = None
        self.timed_out = False
        self.status: StatusFile | None = None
        self.stream: TextIO | None = sys.stdout if outputs.stream_events else None
        self.app: MassGenApp | None = None

    def answer_out(self) -> TextIO | None:
        """Where the console view writes the final answer: nowhere with ``--stream-events`` (stdout holds
        the events alone), else stdout."""
        return io.StringIO() if self.outputs.stream_events else None

    def prepare(self, config: MassGenConfig) -> None:
        """Before the run is built: an automated run is logged (its status file lives in its log folder)
        and shows no progress, as MassGen's automation mode sets its config."""
        if self.outputs.automated:
            config.ui.logging_enabled = True
            config.ui.automation_mode = True

    def attach(self, app: MassGenApp, question: str | None) -> None:
        """Listen to ``app``'s events; an automated run names its log folder and status file first."""
        self.app = app
        app.events.subscribe(self)
        if not self.outputs.automated:
            return
        folder = app.run_log.directory.resolve()
        if app.run_log.enabled:  # else the state folder cannot be written: said already, no status kept
            meta = {"session_id": app.session.id, "log_dir": str(folder), "question": question}
            self.status = StatusFile(folder / STATUS_FILE, app.loaded.config.agent_ids, meta, self._stopped)
            app.events.subscribe(self.status)
        self._say(f"LOG_DIR: {folder}")  # once the status file is there to read
        self._say(f"STATUS: {folder / STATUS_FILE}")

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, FinalAnswer):
            self.final = event  # the stream's last line, once the run is over
            return
        if isinstance(event, TurnEnded):
            self.timed_out = event.timed_out
        if self.stream is not None and self.app is not None:
            self._line(event_line(event, session_id=self.app.session.id, turn=self.app.run_log.turn))

    def _say(self, line: str) -> None:
        """An automation line (``LOG_DIR: …``): on stdout, or stderr when stdout holds the events."""
        print(line, file=sys.stderr if self.outputs.stream_events else sys.stdout, flush=True)

    def _line(self, line: str) -> None:
        assert self.stream is not None
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except BrokenPipeError:  # the reader went away (`| head -1`): the run still ends and is logged
            to_devnull(self.stream)

    def finish(self, code: int, error: BaseException | None = None) -> int:
        """The run is over (``code`` as the command would end without automation): the answer goes to
        the output file and as the stream's last event, the status file says how it ended (with the
        automation exit code). Returns ``code``; a failure of an automated run by its time limit is
        raised again as ``TurnTimedOut``."""
        try:
            self._deliver()
        except MassGenError as failure:
            self._end(code or failure.exit_code, error or failure)
            raise
        self._end(code, error)
        return code

    def _deliver(self) -> None:
        """The final answer to the output file, and as the event stream's last line."""
        if self.final is None:
            return
        if self.outputs.output_file is not None:
            _write_answer(self.outputs.output_file, self.final.text)
            if self.outputs.automated:
                self._say(f"OUTPUT_FILE: {self.outputs.output_file.resolve()}")
        if self.stream is not None and self.app is not None:
            context = {"session_id": self.app.session.id, "turn": self.app.run_log.turn}
            self._line(event_line(self.final, **context))

    def _end(self, code: int, error: BaseException | None) -> None:
        if not self.outputs.automated:
            return
        ending = automation_code(code)
        if ending == EXIT_EXECUTION_ERROR and self.timed_out:
            ending = EXIT_TIMEOUT
        if self.status is not None:
            details = str(error) if isinstance(error, MassGenError) else None
            self.status.finish(_REASONS.get(ending, "error"), details, ending)
        if ending == EXIT_TIMEOUT and error is not None:
            raise TurnTimedOut(str(error)) from error

    def _stopped(self, message: str) -> None:
        if self.app is not None:
            self.app.events(Notice("degraded", message))


def _write_answer(path: Path, text: str) -> None:
    """The final answer in ``path`` as it is (MassGen's way; its folder made), created with the user's
    usual file mode, as a shell's ``>`` would (the state folder's files are private, this one is yours)."""
    from massgen_cli.state import user_umask

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 & ~user_umask())
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise MassGenError(f"the answer could not be written to --output-file {path}: {error}") from None

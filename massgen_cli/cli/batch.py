"""Many questions at once: ``massgen batch QUESTIONS.jsonl --config FILE --out RESULTS.jsonl``.

Each question is one turn of its own session (``batch-<id>``; retrieval keeps to it only where
``persistent_memory.session_name`` is set, as in any run whose session is named by a flag) or,
with a shared session, a turn of that one session (then the questions run one after another: a session
is answered by one run at a time). Up to ``concurrency`` questions run at once, each in its own thread
with its own ``MassGenApp`` (its own event loop and log folder; the process's embedded model server and
memory store are shared). A result line is appended as each question finishes, so the output is
resumable: ``resume`` skips the ids already in it. A failing question is recorded and the batch goes on.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from massgen_cli.agent.spending import SharedSpending
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.errors import UsageError


@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str
    line: int


@dataclass
class BatchResult:
    """One line of the output file."""

    id: str
    question: str
    final_answer: str | None = None
    winner: str | None = None
    end_reason: str = ""
    tokens: int = 0
    cost: float | None = 0.0
    seconds: float = 0.0
    error: str | None = None
    log_folder: str | None = None

    @property
    def answered(self) -> bool:
        return self.error is None and self.final_answer is not None


@dataclass
class BatchProgress:
    """What a front end shows: questions done, failed and to do, and the cost so far."""

    total: int
    done: int = 0
    failed: int = 0
    cost: float = 0.0
    cost_unknown: bool = False


def read_questions(path: Path) -> tuple[list[BatchQuestion], list[BatchResult]]:
    """The questions of a JSONL file (``{"id"?, "question", ...}`` per line; the id defaults to the line
    number), and a failed result for each line that is not one."""
    questions: list[BatchQuestion] = []
    broken: list[BatchResult] = []
    seen: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the questions file {path}: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item_id = f"line-{number}"
        try:
            item = json.loads(line)
            item_id = str(item.get("id", number)) if isinstance(item, dict) else item_id
            question = item["question"] if isinstance(item, dict) else None
            if not isinstance(question, str) or not question.strip():
                raise ValueError("no 'question' text")
        except (ValueError, KeyError) as error:
            broken.append(BatchResult(item_id, line[:200], error=f"line {number} of {path.name}: {error}"))
            continue
        if item_id in seen:
            broken.append(BatchResult(item_id, question, error=f"line {number}: id {item_id!r} repeats"))
            continue
        seen.add(item_id)
        questions.append(BatchQuestion(item_id, question, number))
    return questions, broken


def keep_answered(out: Path) -> tuple[set[str], int]:
    """For ``resume``: the ids answered in an output file, and how many failed lines were taken out of it
    (with any half-written last line), so each failed question is asked again and keeps one line."""
    if not out.is_file():
        return set(), 0
    kept: list[str] = []
    answered: set[str] = set()
    lines = out.read_text(encoding="utf-8").splitlines()
    for line in lines:
        try:
            record = json.loads(line)
            item_id = str(record["id"])
        except (ValueError, KeyError, TypeError):
            continue
        if record.get("error") is None and item_id not in answered:
            answered.add(item_id)
            kept.append(line)
    if len(kept) < len(lines):
        temporary = out.with_name(f".{out.name}.{os.getpid()}")
        temporary.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
        temporary.replace(out)
    return answered, len(lines) - len(kept)


class ResultWriter:
    """Appends result lines as questions finish (one lock, one flush per line)."""

    def __init__(self, out: Path):
        out.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = out.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, result: BatchResult) -> None:
        line = json.dumps(result.__dict__, ensure_ascii=False)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


AppFactory = Callable[[str], Any]
"""session id → a ready ``MassGenApp`` (quiet, with its own console)."""


@dataclass
class BatchBudget:
    """``batch --max-cost``: what the whole batch may spend, in US dollars, and what its questions spent
    together. Each question's spending caps count what the others spent (so a running question stops
    once the batch's cap is spent), and a new question starts only while what was spent, with the running
    questions and the new one each at the average cost of a finished question, stays within the cap (the
    first questions start at once: nothing is known yet)."""

    cap_usd: float
    spent: SharedSpending = field(default_factory=SharedSpending)
    finished: int = 0

    def spent_usd(self) -> float:
        return self.spent.total().cost_usd or 0.0

    def admits(self, running: int) -> bool:
        """Whether one more question may start beside ``running`` others."""
        spent = self.spent_usd()
        if spent >= self.cap_usd:
            return False
        if not self.finished:
            return True
        return spent + (running + 1) * spent / self.finished <= self.cap_usd


class BatchRun:
    """Runs questions on ``make_app`` apps with at most ``concurrency`` at once; ``stop`` cancels the ones
    running (they are not written, so a resumed batch asks them again) and takes no more."""

    def __init__(
        self,
        make_app: AppFactory,
        concurrency: int,
        shared_session: str | None = None,
        budget: BatchBudget | None = None,
    ):
        self.make_app = make_app
        self.concurrency = 1 if shared_session else max(1, concurrency)
        self.shared_session = shared_session
        self.budget = budget
        self.unasked = 0
        """Questions left unasked because the batch's budget was spent (``budget``)."""
        self.stopping = threading.Event()
        self._apps: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._shared_app: Any = None

    def run(
        self, questions: list[BatchQuestion], writer: ResultWriter, on_result: Callable[[BatchResult], None]
    ) -> None:
        """Ctrl-C (in the calling thread) stops the batch: the running questions are cancelled and left
        out of the file, then KeyboardInterrupt is raised again."""
        pending, interrupted = iter(questions), False
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="batch") as pool:
            running: set[Future[BatchResult | None]] = set()
            running |= {pool.submit(self._one, q) for q in self._next(pending, self.concurrency, 0)}
            while running:
                try:
                    finished, running = wait(running, return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    interrupted = True
                    self.stop()
                    continue
                for future in finished:
                    result = future.result()
                    if result is not None:
                        writer.write(result)
                        on_result(result)
                    if self.budget is not None:
                        self.budget.finished += 1
                if not self.stopping.is_set():
                    new = self._next(pending, len(finished), len(running))
                    running |= {pool.submit(self._one, q) for q in new}
        self.unasked = sum(1 for _ in pending) if self.budget is not None and not interrupted else 0
        if self._shared_app is not None:
            self._shared_app.close()
        if interrupted:
            raise KeyboardInterrupt

    def _next(self, pending: Iterator[BatchQuestion], room: int, running: int) -> list[BatchQuestion]:
        """Up to ``room`` questions to start beside ``running`` others, as far as the budget admits."""
        if self.budget is None:
            return _take(pending, room)
        taken: list[BatchQuestion] = []
        while len(taken) < room and self.budget.admits(running + len(taken)):
            question = next(pending, None)
            if question is None:
                break
            taken.append(question)
        return taken

    def stop(self) -> None:
        """Take no more questions and cancel the running ones (from any thread)."""
        self.stopping.set()
        with self._lock:
            apps = list(self._apps.values())
        for app in apps:
            app.cancel_running_turn()

    def _one(self, question: BatchQuestion) -> BatchResult | None:
        if self.stopping.is_set():
            return None
        started, app = time.monotonic(), None
        try:
            app = self._app_for(question)
            if self.stopping.is_set():
                return None
            return answer_with(app, question, started)
        except BaseException as error:  # one question's failure is its result; the batch goes on
            if self.stopping.is_set():
                return None
            return failed(question, error, started)
        finally:
            self._release(question, app)

    def _app_for(self, question: BatchQuestion) -> Any:
        if self.shared_session is not None:
            if self._shared_app is None:
                self._shared_app = self.make_app(self.shared_session)
            app = self._shared_app
        else:
            app = self.make_app(question_session(question))
        with self._lock:
            self._apps[question.id] = app
        return app

    def _release(self, question: BatchQuestion, app: Any) -> None:
        with self._lock:
            self._apps.pop(question.id, None)
        if app is not None and app is not self._shared_app:
            app.close()


def answer_with(app: Any, question: BatchQuestion, started: float) -> BatchResult:
    """Ask ``question`` of ``app`` (one turn) and make its result line."""
    result = app.ask(question.question)
    spent = result.turn_usage
    return BatchResult(
        question.id,
        question.question,
        final_answer=result.final_answer,
        winner=result.winner,
        end_reason=result.end_reason,
        tokens=spent.tokens,
        cost=spent.cost_usd,
        seconds=_since(started),
        error=None if result.final_answer is not None else f"no answer: {result.end_reason}",
        log_folder=str(app.run_log.directory) if app.run_log.enabled else None,
    )


def failed(question: BatchQuestion, error: BaseException, started: float) -> BatchResult:
    return BatchResult(question.id, question.question, error=_describe(error), seconds=_since(started))


def answer_alone(loaded: LoadedConfig, state_dir: Path, question: BatchQuestion) -> BatchResult:
    """One question in its own session, start to end (what a worker process runs)."""
    started, app = time.monotonic(), None
    try:
        app = app_factory(loaded, state_dir)(question_session(question))
        return answer_with(app, question, started)
    except Exception as error:
        return failed(question, error, started)
    finally:
        if app is not None:
            app.close()


def question_session(question: BatchQuestion) -> str:
    return f"batch-{_safe(question.id)}"


def _take(questions: Iterator[BatchQuestion], count: int) -> list[BatchQuestion]:
    return [question for _, question in zip(range(count), questions, strict=False)]


def _safe(item_id: str) -> str:
    """An id as a session id: letters, digits, '_', '-' and '.' kept, anything else as '_'."""
    cleaned = "".join(c if c.isalnum() or c in "_-." else "_" for c in item_id)[:100]
    return cleaned.lstrip("._-") or "question"


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)


def batch_progress(total: int) -> tuple[BatchProgress, Callable[[BatchResult], None]]:
    """A progress record and the callback that keeps it."""
    progress = BatchProgress(total)

    def on_result(result: BatchResult) -> None:
        progress.done += 1
        progress.failed += not result.answered
        if result.cost is None:
            progress.cost_unknown = True
        else:
            progress.cost += result.cost

    return progress, on_result


def app_factory(loaded: LoadedConfig, state_dir: Path, shared: SharedSpending | None = None) -> AppFactory:
    """Quiet apps on ``loaded`` under ``state_dir``, one per session id (their caps sharing ``shared``)."""
    from massgen_cli.app import MassGenApp

    def make(session_id: str) -> Any:
        app = MassGenApp(loaded, state_dir=state_dir, session_id=session_id)
        if shared is not None:
            app.share_spending(shared)
        return app

    return make

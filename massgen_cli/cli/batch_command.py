"""``massgen batch``: the front end of ``batch.BatchRun`` (questions in, result lines out, progress with
the cost so far on stderr)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from massgen_cli.agent.spending import dollars
from massgen_cli.cli.batch import (
    BatchBudget,
    BatchProgress,
    BatchResult,
    BatchRun,
    ResultWriter,
    app_factory,
    batch_progress,
    keep_answered,
    read_questions,
)
from massgen_cli.cli.commands import override_spending_cap
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.errors import UsageError
from massgen_cli.ui import cost_text

if TYPE_CHECKING:
    from massgen_cli.cli.batch_ray import RayBatch


@dataclass(frozen=True)
class BatchOptions:
    questions: Path
    out: Path
    config: str | None
    concurrency: int
    resume: bool
    shared_session: str | None
    state_dir: Path | None
    ray: str | None = None
    max_cost: float | None = None
    """What the whole batch may spend, in US dollars (``--max-cost``)."""


def run_batch(options: BatchOptions) -> int:
    from massgen_cli.config import load_config
    from massgen_cli.state import resolve_state_dir

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if options.out.exists() and options.out.stat().st_size and not options.resume:
        raise UsageError(
            f"{options.out} already has results; add --resume to go on with it, or choose another --out"
        )
    loaded = load_config(options.config)
    questions, broken = read_questions(options.questions)
    done, taken_out = keep_answered(options.out) if options.resume else (set(), 0)
    todo = [question for question in questions if question.id not in done]
    unwritten = [result for result in broken if result.id not in done]
    if done or taken_out:
        skipped = len(questions) + len(broken) - len(todo) - len(unwritten)
        again = (
            f"; {taken_out} failed or unfinished result line(s) taken out, asked again" if taken_out else ""
        )
        console.print(f"resuming: {skipped} question(s) already answered in {options.out}{again}")
    broken = unwritten
    if options.shared_session and options.concurrency > 1:
        console.print(
            f"[dim]a session answers one question at a time: --concurrency is 1, not {options.concurrency}[/]"
        )
    budget = _budget(options, loaded)
    run = _runner(options, loaded, resolve_state_dir(options.state_dir), budget)
    progress, count = batch_progress(len(todo) + len(broken))
    writer = ResultWriter(options.out)
    try:
        for result in broken:
            writer.write(result)
            count(result)
        _with_progress(console, progress, lambda on_result: run.run(todo, writer, on_result), count)
    except KeyboardInterrupt:
        console.print(
            f"[yellow]stopped: {progress.done} result(s) written to {options.out}; the running "
            "questions were cancelled and are not in it: add --resume to go on[/]"
        )
        raise
    finally:
        writer.close()
    console.print(_summary(progress, options.out))
    unasked = run.unasked if isinstance(run, BatchRun) else 0
    if budget is not None and unasked:
        console.print(
            f"[yellow]spending cap reached: {dollars(budget.spent_usd())} of {dollars(budget.cap_usd)}; "
            f"{unasked} question(s) not asked: add --resume with a higher --max-cost to ask them[/]"
        )
    return 1 if progress.failed or unasked else 0


def _budget(options: BatchOptions, loaded: LoadedConfig) -> BatchBudget | None:
    """The whole batch's budget of ``--max-cost``, which every question's run counts against."""
    if options.max_cost is None:
        return None
    if options.ray is not None:
        raise UsageError("--max-cost caps a batch answered in this process: not with --ray")
    override_spending_cap(loaded.config, options.max_cost)
    return BatchBudget(options.max_cost)


def _runner(
    options: BatchOptions, loaded: LoadedConfig, state_dir: Path, budget: BatchBudget | None
) -> BatchRun | RayBatch:
    if options.ray is None:
        shared = budget.spent if budget is not None else None
        factory = app_factory(loaded, state_dir, shared)
        return BatchRun(factory, options.concurrency, options.shared_session, budget)
    if options.shared_session:
        raise UsageError("--shared-session asks the questions one at a time in one process: not with --ray")
    from massgen_cli.cli.batch_ray import RayBatch

    return RayBatch(loaded, state_dir, options.concurrency, options.ray)


def _with_progress(
    console: Console,
    progress: BatchProgress,
    run: Callable[[Callable[[BatchResult], None]], None],
    count: Callable[[BatchResult], None],
) -> None:
    """A Rich progress bar with the cost so far on a terminal; one line per result otherwise."""
    if not console.is_terminal:

        def on_result(result: BatchResult) -> None:
            count(result)
            console.print(escape(_result_line(result, progress)))

        run(on_result)
        return
    with Progress(
        TextColumn("batch"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeElapsedColumn(), console=console,
    ) as bar:  # fmt: skip
        task = bar.add_task(_cost_text(progress), total=progress.total, completed=progress.done)

        def on_result(result: BatchResult) -> None:
            count(result)
            bar.update(task, completed=progress.done, description=_cost_text(progress))

        run(on_result)


def _result_line(result: BatchResult, progress: BatchProgress) -> str:
    where = f"[{progress.done}/{progress.total}] {result.id}"
    if result.error:
        return f"{where} failed: {result.error}"
    return f"{where} answered in {result.seconds:.1f}s · {_cost_text(progress)}"


def _cost_text(progress: BatchProgress, *, so_far: bool = True) -> str:
    """The cost of the results so far, shown as every view shows a cost (``free``, ``$0.0031``)."""
    if progress.cost_unknown and not progress.cost:
        return "cost unknown"
    cost = cost_text(progress.cost) + (" so far" if so_far else "")
    return f"{cost} (and some unknown)" if progress.cost_unknown else cost


def _summary(progress: BatchProgress, out: Path) -> str:
    answered = progress.done - progress.failed
    cost = _cost_text(progress, so_far=False)
    return f"{answered} answered, {progress.failed} failed · {cost} · results in {out}"

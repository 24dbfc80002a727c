"""Plan and execute (MassGen's ``--plan-and-execute``) over an app whose config turns plan mode on: a
planning turn makes the plan, then one turn per chunk of it carries it out, in the same session (the
execution turns see the planning turn in their history and memory)."""

from __future__ import annotations

from massgen_cli.app import MassGenApp
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.plans import KeptPlan, PlanDesk


def plan_desk(app: MassGenApp) -> PlanDesk:
    """The plan mode of ``app``'s run; a ``UsageError`` when its config leaves plan mode off."""
    desk = app.run.provided("plan mode")
    if not isinstance(desk, PlanDesk):
        raise UsageError("planning needs plan mode: --plan, --plan-and-execute or coordination.plan_mode")
    return desk


def make_plan(app: MassGenApp, question: str) -> KeptPlan:
    """A planning turn for ``question``; the plan it chose (kept under the state folder when it can be
    written), or a ``MassGenError`` saying why there is none."""
    desk = plan_desk(app)
    desk.phase, desk.made = "plan", None
    result = app.ask(question)
    if result.final_answer is None or desk.made is None:
        why = result.end_reason if result.final_answer is None else "its final answer held no plan"
        raise MassGenError(f"the planning turn gave no plan to execute: {why}")
    return desk.made


def execute_chunk(app: MassGenApp, question: str, kept: KeptPlan, chunk: str) -> TurnResult:
    """One execution turn: the agents carry out the tasks of ``chunk`` of ``kept``."""
    desk, chunks = plan_desk(app), kept.plan.chunks()
    desk.execute(kept, chunk)
    part = f" (chunk {chunk}, {chunks.index(chunk) + 1} of {len(chunks)})" if len(chunks) > 1 else ""
    try:
        return app.ask(f"Carry out plan {kept.plan_id}{part} for: {question}")
    finally:
        desk.phase = "plan"


def execute_plan(app: MassGenApp, question: str, kept: KeptPlan) -> TurnResult:
    """One turn per chunk of ``kept``, in order; the last turn's result (or the first that gave no answer:
    the chunks after it are not run)."""
    for chunk in kept.plan.chunks():
        result = execute_chunk(app, question, kept, chunk)
        if result.final_answer is None:
            break
    return result


def plan_and_execute(app: MassGenApp, question: str) -> TurnResult:
    """Plan ``question``, then execute the plan; the last execution turn's result."""
    return execute_plan(app, question, make_plan(app, question))

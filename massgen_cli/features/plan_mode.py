"""Plan mode (``coordination.plan_mode``; MassGen's ``--plan`` and ``--plan-and-execute``).

Planning turn: the agents plan the task instead of doing it; an answer is a task plan (a JSON task list,
MassGen's ``project_plan.json`` shape, sized by ``plan_depth``, ``plan_target_steps`` and
``plan_target_chunks``), and a new answer that holds none, or one that does not hold together, is refused
with the reason. When the turn ends, the plan of its final answer is kept under ``<state>/plans/`` and
said (``PlanMade``). Execution turn (whoever drives the phases sets the ``PlanDesk``): the agents carry
out one chunk of a kept plan; with the planning tools on, each agent's plan starts with that chunk's tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.config.quality import QualitySettings
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import EventSink, Notice
from massgen_cli.feature_events import PlanMade
from massgen_cli.features.declaration import Feature, Opened, Opening

if TYPE_CHECKING:
    from pathlib import Path

    from massgen_cli.plans import KeptPlan, Plan, PlanDesk
    from massgen_cli.tools.planning import PlanBook

SIZES = {
    "dynamic": "as many tasks as the work needs, no more",
    "shallow": "5 to 10 tasks",
    "medium": "20 to 50 tasks",
    "deep": "100 to 200 tasks or more",
}
PLAN_SHAPE = (
    '{"tasks": [{"id": "T1", "description": "what to do and how", "chunk": "C01", "depends_on": [], '
    '"priority": "high|medium|low", "verification": "how to know it is done"}]}'
)


def planning_note(settings: QualitySettings) -> str:
    """What a planning turn asks of the agents."""
    size = SIZES[settings.plan_depth]
    if settings.plan_target_steps is not None:
        size = f"about {settings.plan_target_steps} tasks"
    chunks = settings.plan_target_chunks or 1
    chunking = (
        "Put every task in chunk C01."
        if chunks == 1
        else f"Split the tasks into {chunks} chunks, labelled C01, C02, … in the order they are to be "
        "done; each chunk is carried out in a turn of its own."
    )
    return (
        "Plan mode: plan the task, do not carry it out. Someone else will execute your plan, so make each "
        "task say what to do and how, and how to check it is done. "
        f"Size: {size}. {chunking} A task depends only on tasks of its own or an earlier chunk, with no "
        f"circles. Your answer is the plan: one JSON object\n{PLAN_SHAPE}\nafter a short rationale if "
        "you want one."
    )


def execution_note(kept: KeptPlan, chunk: str, with_tools: bool) -> str:
    """What an execution turn asks: the chunk's tasks."""
    chunks = kept.plan.chunks()
    where = f"chunk {chunk or 'C01'} ({chunks.index(chunk) + 1} of {len(chunks)})" if len(chunks) > 1 else ""
    earlier = " The chunks before it were done in earlier turns." if chunks.index(chunk) > 0 else ""
    tasks = "\n".join(f"- {task.line()}" for task in kept.plan.of_chunk(chunk))
    tracking = (
        " They are in your task plan: mark each with update_task_status as you go." if with_tools else ""
    )
    scope = f"This turn covers {where}.{earlier}" if where else "This turn covers the whole plan."
    return (
        f"You are carrying out plan {kept.plan_id}, made earlier for this task. {scope} Its tasks:\n"
        f"{tasks}\nDo them, and say in your answer, task by task, what is done.{tracking}"
    )


class PlanMode(StepExtension):
    """The plan-mode notes, the gate on planning answers, and the attempt part that keeps the plan."""

    name: ClassVar[str] = "plan mode"
    part_name: ClassVar[str] = "the plan"

    def __init__(self, settings: QualitySettings, desk: PlanDesk, book: PlanBook | None, keep: Keeper):
        self.settings, self.desk, self.book, self.keep = settings, desk, book, keep

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        desk = self.desk
        self.keep.question = at.question  # what the kept plan is for
        if desk.phase == "execute" and desk.executing is not None:
            return execution_note(desk.executing, desk.chunk, self.book is not None)
        return planning_note(self.settings)

    def veto(self, at: StepAt, answer: str | None) -> str:
        if answer is None or self.desk.phase != "plan":
            return ""
        from massgen_cli.plans import PlanProblem, read_plan

        try:
            read_plan(answer)
        except PlanProblem as problem:
            return f"Plan mode: {problem}. Give the whole plan again as one JSON object."
        return ""

    def presentation_note(self, agent_id: str) -> str:
        if self.desk.phase != "plan":
            return ""
        return f"Present the chosen plan: your final answer holds it whole as one JSON object\n{PLAN_SHAPE}"

    def begin(self, at: AttemptAt) -> None:
        """An execution turn: each agent's task plan starts with the chunk's tasks."""
        desk, book = self.desk, self.book
        if desk.phase != "execute" or desk.executing is None or book is None:
            return
        from massgen_cli.tools.planning import Task

        planned = desk.executing.plan.of_chunk(desk.chunk)
        tasks = [
            Task(t.id, t.description, priority=t.priority, depends_on=list(t.depends_on)) for t in planned
        ]
        for agent_id in book.labels:
            book.seed(agent_id, tasks)

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        if not outcome.answered:
            return []
        if self.desk.phase == "execute":
            self.desk.chunk_done(outcome.at.turn)
            return []
        self.desk.made = self.keep(outcome)
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """Nothing to undo: a plan is kept only when its turn ends answered."""


class Keeper:
    """Reads the plan a planning turn chose and keeps it (under the state folder when it is written)."""

    def __init__(self, state_folder: Path | None, session_id: str, emit: EventSink):
        self.state_folder, self.session_id, self.emit = state_folder, session_id, emit
        self.question = ""

    def __call__(self, outcome: TurnOutcome) -> KeptPlan | None:
        from massgen_cli.plans import KeptPlan, keep_plan

        plan = _chosen_plan(outcome)
        if isinstance(plan, str):
            self.emit(Notice("warning", f"plan mode: no plan was kept, {plan}"))
            return None
        about = {
            "session_id": self.session_id,
            "turn": outcome.at.turn,
            "winner": outcome.winner,
            "question": self.question,
        }
        if self.state_folder is None:
            self.emit(
                Notice("degraded", "plan mode: the plan is not kept, the state folder cannot be written")
            )
            return KeptPlan("unsaved", None, plan, self.question)
        kept = keep_plan(self.state_folder, plan, about)
        lines = tuple(f"{task.chunk or 'C01'} {task.line()}" for task in plan.tasks)
        self.emit(PlanMade(kept.plan_id, str(kept.folder), tuple(plan.chunks()), lines))
        return kept


def _chosen_plan(outcome: TurnOutcome) -> Plan | str:
    """The plan of the final answer, else of the winner's answer; else why there is none."""
    from massgen_cli.plans import PlanProblem, read_plan

    texts: Sequence[str] = [outcome.final_answer or "", outcome.answers.get(outcome.winner or "", "")]
    problem = ""
    for text in texts:
        try:
            return read_plan(text)
        except PlanProblem as error:
            problem = problem or str(error)
    return f"the final answer holds none ({problem})"


def _open(opening: Opening) -> Opened:
    """Plans are read and kept by ``plans``, imported only by a run in plan mode."""
    from massgen_cli.plans import PlanDesk

    config, place = opening.config, opening.place
    desk = PlanDesk()
    keeper = Keeper(place.kept_in, place.session.id, opening.emit)
    mode = PlanMode(config.orchestrator.coordination, desk, opening.provided("task plans"), keeper)
    return Opened(mode, mode, provides=desk)


FEATURE = Feature(
    "plan mode",
    wanted=lambda opening: opening.config.orchestrator.coordination.plan_mode is not None,
    open=_open,
    needs=("task plans",),
    steps_after=("task plans",),
    commits_after=("task plans",),
)

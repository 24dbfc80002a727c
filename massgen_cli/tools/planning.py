"""Task planning (MassGen's ``enable_agent_task_planning``): each agent keeps a plan of tasks with the
planning tools; before every step it sees its own plan and its peers' (under their aliases). A plan
lasts the turn, through the agent's restarts and the turn's attempts; with
``task_planning_filesystem_mode`` it is also kept as ``tasks/plan.json`` in the agent's workspace. The
plans of a turn are kept in the attempt's log and in the session when the turn ends."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from massgen_cli.agent_folders import write_inside
from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.backends.base import ToolSpec
from massgen_cli.blocks import TASK_PLANS
from massgen_cli.events import Notice, RunEvent
from massgen_cli.messages import Message
from massgen_cli.state import read_json, write_json
from massgen_cli.tools.base import Tool, ToolError, argument, schema

STATUSES = ("pending", "in_progress", "completed", "verified", "blocked")
PRIORITIES = ("low", "medium", "high")
MARKS = {"pending": "·", "in_progress": "◐", "completed": "✓", "verified": "✓✓", "blocked": "✗"}
PLANS_HEADER = TASK_PLANS
PLAN_IN_WORKSPACE = "tasks/plan.json"
PLANS_FILE = "plans.json"
GUIDANCE = (
    "Keep a task plan for substantial work: create it with create_task_plan before you change anything, "
    "mark each task in_progress then completed (verified once you checked it), note what you learn with "
    "add_task_note, and end an answer with what is done and what is not. Your plan and your peers' are "
    "shown before every step."
)


@dataclass
class Task:
    id: str
    description: str
    status: str = "pending"
    priority: str = "medium"
    depends_on: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        after = f" (after {', '.join(self.depends_on)})" if self.depends_on else ""
        return f"{MARKS[self.status]} {self.id} [{self.status}] {self.description}{after}"


@dataclass(frozen=True)
class PlanSettings:
    max_tasks: int = 10
    in_workspace: bool = False


class PlanBook:
    """Every agent's plan in this turn; a part of the attempt lifecycle (plans are kept when the turn
    ends, and a new turn starts with none)."""

    part_name: ClassVar[str] = "task plans"

    def __init__(
        self,
        settings: PlanSettings,
        labels: Mapping[str, str],
        emit: Callable[[RunEvent], None],
        session_dir: Path | None = None,
    ):
        """``labels``: each agent's alias as its peers see it; ``session_dir`` None: nothing is saved."""
        self.settings = settings
        self.labels = dict(labels)
        self.emit = emit
        self.session_dir = session_dir
        self.plans: dict[str, list[Task]] = {}
        self.workspaces: dict[str, Path] = {}
        self.turn = 0
        self.log_dir: Path | None = None

    def tools(self, agent_id: str, workspace: Path | None) -> list[Tool]:
        """The planning tools of ``agent_id`` (its plan mirrored into ``workspace`` in filesystem mode)."""
        if workspace is not None and self.settings.in_workspace:
            self.workspaces[agent_id] = workspace
        return _planning_tools(self, agent_id)

    def seed(self, agent_id: str, tasks: Sequence[Task]) -> None:
        """Start ``agent_id``'s plan of this turn with ``tasks`` (a plan made earlier; each agent gets its
        own copies), unless it has one already (a later attempt of the turn keeps its progress)."""
        if agent_id not in self.plans:
            self.plans[agent_id] = [
                replace(task, depends_on=list(task.depends_on), notes=[]) for task in tasks
            ]
            self.changed(agent_id)

    def block(self, agent_id: str) -> Message | None:
        """The plans ``agent_id`` sees before a step: its own, then its peers' under their aliases."""
        sections = []
        for owner, tasks in self.plans.items():
            title = "Your plan" if owner == agent_id else f"Plan of {self.labels.get(owner, owner)}"
            sections.append("\n".join([f"{title}:", *(task.line() for task in tasks)]))
        if not sections:
            return None
        return {"role": "system", "content": "\n\n".join([PLANS_HEADER, *sections])}

    def changed(self, agent_id: str) -> None:
        """Say what the plan now is, and mirror it into the workspace in filesystem mode."""
        tasks = self.plans.get(agent_id, [])
        done = sum(task.status in ("completed", "verified") for task in tasks)
        self.emit(Notice("info", f"[{agent_id}] plan: {done} of {len(tasks)} task(s) done"))
        workspace = self.workspaces.get(agent_id)
        if workspace is not None:
            record = {"agent": self.labels.get(agent_id, agent_id), "tasks": [asdict(t) for t in tasks]}
            try:
                write_inside(workspace, PLAN_IN_WORKSPACE, json.dumps(record, indent=2, ensure_ascii=False))
            except OSError as error:  # the agent's own folder: a link there is refused, never followed
                said = f"[{agent_id}] plan not mirrored to {PLAN_IN_WORKSPACE}: {error}"
                self.emit(Notice("warning", said))

    def begin(self, at: AttemptAt) -> None:
        if at.turn != self.turn:
            self.turn, self.plans = at.turn, {}
        self.log_dir = at.log_dir

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """The turn's plans go to its log and its session."""
        if not self.plans:
            return []
        plans = {agent_id: [asdict(task) for task in tasks] for agent_id, tasks in self.plans.items()}
        if self.log_dir is not None:
            write_json(self.log_dir / PLANS_FILE, plans)
        if self.session_dir is not None:
            path = self.session_dir / PLANS_FILE
            kept = read_json(path, "task plans") if path.is_file() else {}
            write_json(path, {**kept, str(outcome.at.turn): plans})
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """Plans outlive a rejected attempt (the work they track goes on); a new turn starts afresh."""


def _planning_tools(book: PlanBook, agent_id: str) -> list[Tool]:
    calls = PlanCalls(book, agent_id)
    handlers = {
        "create_task_plan": calls.create,
        "add_task": calls.add,
        "update_task_status": calls.update,
        "add_task_note": calls.note,
        "get_task_plan": calls.show,
    }
    return [Tool(spec, handlers[spec.name]) for spec in _plan_specs()]


@dataclass(frozen=True)
class PlanCalls:
    """What each planning tool does to ``agent_id``'s plan in ``book``."""

    book: PlanBook
    agent_id: str

    async def create(self, arguments: dict[str, Any]) -> str:
        book, agent_id = self.book, self.agent_id
        if book.plans.get(agent_id):
            raise ToolError(
                "you already have a plan; use add_task or update_task_status (get_task_plan shows it)"
            )
        items = argument(arguments, "tasks", list)
        book.plans[agent_id] = []
        try:
            for item in items:
                _add(book, agent_id, item if isinstance(item, dict) else {"description": str(item)})
        except ToolError:
            book.plans.pop(agent_id)  # all or nothing: a retry starts clean
            raise
        return _changed(book, agent_id)

    async def add(self, arguments: dict[str, Any]) -> str:
        _add(self.book, self.agent_id, arguments)
        return _changed(self.book, self.agent_id)

    async def update(self, arguments: dict[str, Any]) -> str:
        found = _task(self.book, self.agent_id, argument(arguments, "task_id", str))
        new = argument(arguments, "status", str)
        if new not in STATUSES:
            raise ToolError(f"status must be one of {', '.join(STATUSES)}")
        found.status = new
        note = arguments.get("notes")
        if isinstance(note, str) and note.strip():
            found.notes.append(note.strip())
        return _changed(self.book, self.agent_id)

    async def note(self, arguments: dict[str, Any]) -> str:
        found = _task(self.book, self.agent_id, argument(arguments, "task_id", str))
        found.notes.append(argument(arguments, "note", str))
        return _changed(self.book, self.agent_id)

    async def show(self, arguments: dict[str, Any]) -> str:
        return _plan_text(self.book.plans.get(self.agent_id, []))


def _plan_specs() -> list[ToolSpec]:
    """The planning tools as the model sees them."""
    task = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "priority": {"type": "string", "enum": list(PRIORITIES)},
            "depends_on": {"type": "array", "items": {"type": "string"}, "description": "Task ids."},
        },
        "required": ["description"],
    }
    status = {"type": "string", "enum": list(STATUSES)}
    return [
        ToolSpec(
            "create_task_plan",
            "Create your task plan.",
            schema({"tasks": {"type": "array", "items": task}}, ["tasks"]),
        ),
        ToolSpec("add_task", "Add a task to your plan.", task),
        ToolSpec(
            "update_task_status",
            "Set a task's status (pending, in_progress, completed, verified, blocked), with notes.",
            schema(
                {"task_id": {"type": "string"}, "status": status, "notes": {"type": "string"}},
                ["task_id", "status"],
            ),
        ),
        ToolSpec(
            "add_task_note",
            "Add a note to a task.",
            schema({"task_id": {"type": "string"}, "note": {"type": "string"}}, ["task_id", "note"]),
        ),
        ToolSpec("get_task_plan", "Show your plan.", schema({}, [])),
    ]


def _add(book: PlanBook, agent_id: str, item: dict[str, Any]) -> Task:
    tasks = book.plans.setdefault(agent_id, [])
    if len(tasks) >= book.settings.max_tasks:
        raise ToolError(f"a plan holds at most {book.settings.max_tasks} tasks (max_tasks_per_plan)")
    description = argument(item, "description", str).strip()
    priority = item.get("priority") or "medium"
    if priority not in PRIORITIES:
        raise ToolError(f"priority must be one of {', '.join(PRIORITIES)}")
    known = {task.id for task in tasks}
    depends_on = [str(task_id) for task_id in item.get("depends_on") or []]
    unknown = [task_id for task_id in depends_on if task_id not in known]
    if unknown:
        raise ToolError(f"no task {', '.join(unknown)} in your plan (depends_on names earlier tasks' ids)")
    if not description:
        raise ToolError("a task needs a description")
    task = Task(f"t{len(tasks) + 1}", description, priority=priority, depends_on=depends_on)  # ids: t1, t2…
    tasks.append(task)
    return task


def _task(book: PlanBook, agent_id: str, task_id: str) -> Task:
    for task in book.plans.get(agent_id, []):
        if task.id == task_id:
            return task
    raise ToolError(f"no task {task_id} in your plan (get_task_plan shows it)")


def _changed(book: PlanBook, agent_id: str) -> str:
    book.changed(agent_id)
    return _plan_text(book.plans[agent_id])


def _plan_text(tasks: list[Task]) -> str:
    if not tasks:
        return "You have no plan yet."
    lines = []
    for task in tasks:
        lines.append(task.line())
        lines += [f"    note: {note}" for note in task.notes]
    return "\n".join(lines)

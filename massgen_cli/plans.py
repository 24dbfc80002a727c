"""Task plans as plan mode makes them (``--plan``, ``--plan-and-execute``): a plan is read from an answer
(a JSON object with a ``tasks`` list, MassGen's ``project_plan.json`` shape), checked, kept under the
state folder's ``plans/`` and executed chunk by chunk. ``PlanDesk`` is what the plan-mode feature and
whoever drives the phases share: the phase a turn is in and the plan made last."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from massgen_cli.state import write_json

PLANS_FOLDER = "plans"
PLAN_FILE = "plan.json"
METADATA_FILE = "metadata.json"
PRIORITIES = ("low", "medium", "high")
Phase = Literal["plan", "execute"]
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


class PlanProblem(ValueError):
    """Why an answer holds no usable plan (a sentence the agent can act on)."""


@dataclass(frozen=True)
class PlanTask:
    id: str
    description: str
    chunk: str = ""
    depends_on: tuple[str, ...] = ()
    priority: str = "medium"
    verification: str = ""

    def line(self) -> str:
        after = f" (after {', '.join(self.depends_on)})" if self.depends_on else ""
        check = f" — verify: {self.verification}" if self.verification else ""
        return f"{self.id} [{self.priority}] {self.description}{after}{check}"


@dataclass(frozen=True)
class Plan:
    tasks: tuple[PlanTask, ...]

    def chunks(self) -> list[str]:
        """The chunk labels in execution order (sorted, as MassGen orders ``C01_…``, ``C02_…``)."""
        return sorted({task.chunk for task in self.tasks})

    def of_chunk(self, chunk: str) -> list[PlanTask]:
        return [task for task in self.tasks if task.chunk == chunk]

    def document(self) -> dict[str, Any]:
        """The plan as ``plan.json`` keeps it."""
        tasks = []
        for task in self.tasks:
            record = {**asdict(task), "depends_on": list(task.depends_on), "status": "pending"}
            tasks.append({key: value for key, value in record.items() if value != ""})
        return {"tasks": tasks}


def read_plan(text: str) -> Plan:
    """The plan an answer holds: the first JSON object with a ``tasks`` list, fenced or bare; a
    ``PlanProblem`` when there is none or it does not hold together."""
    document = _plan_document(text)
    raw = document.get("tasks")
    if not isinstance(raw, list) or not raw:
        raise PlanProblem("the plan's 'tasks' must be a non-empty list")
    tasks = tuple(_task(item, number) for number, item in enumerate(raw, 1))
    _check(tasks)
    return Plan(tasks)


def _plan_document(text: str) -> dict[str, Any]:
    candidates = [match.group(1) for match in _FENCED.finditer(text)]
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start : text.rfind("}") + 1])
    for candidate in candidates:
        try:
            document = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(document, dict) and "tasks" in document:
            return document
    raise PlanProblem(
        'your answer holds no plan: include it as one JSON object {"tasks": [{"id", "description", '
        '"chunk", "depends_on", "priority", "verification"}, ...]}'
    )


def _task(item: Any, number: int) -> PlanTask:
    if not isinstance(item, dict):
        raise PlanProblem(f"task {number} must be an object with an id and a description")
    task_id = str(item.get("id") or "").strip()
    description = str(item.get("description") or item.get("title") or item.get("task") or "").strip()
    if not task_id or not description:
        raise PlanProblem(f"task {number} needs an 'id' and a 'description'")
    depends = item.get("depends_on") or []
    if not isinstance(depends, list):
        depends = [depends]
    priority = str(item.get("priority") or "medium").lower()
    metadata = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
    verification = item.get("verification") or metadata.get("verification") or ""
    return PlanTask(
        task_id,
        description,
        str(item.get("chunk") or "").strip(),
        tuple(str(d).strip() for d in depends if str(d).strip()),
        priority if priority in PRIORITIES else "medium",
        str(verification).strip(),
    )


def _check(tasks: tuple[PlanTask, ...]) -> None:
    """Ids unique; every dependency a known task of the same or an earlier chunk, and no circle."""
    chunk_of = {}
    for task in tasks:
        if task.id in chunk_of:
            raise PlanProblem(f"two tasks share the id {task.id!r}")
        chunk_of[task.id] = task.chunk
    for task in tasks:
        for needed in task.depends_on:
            if needed not in chunk_of:
                raise PlanProblem(f"task {task.id} depends on {needed!r}, which is no task of the plan")
            if chunk_of[needed] > task.chunk:
                raise PlanProblem(f"task {task.id} depends on {needed}, which comes in a later chunk")
    _check_no_circle({task.id: task.depends_on for task in tasks})


def _check_no_circle(needs: dict[str, tuple[str, ...]]) -> None:
    done: set[str] = set()
    while len(done) < len(needs):
        ready = [task for task, after in needs.items() if task not in done and set(after) <= done]
        if not ready:
            raise PlanProblem(f"tasks depend on each other in a circle: {sorted(set(needs) - done)}")
        done.update(ready)


@dataclass(frozen=True)
class KeptPlan:
    """A plan kept under the state folder: its id and folder, the plan and the question it is for."""

    plan_id: str
    folder: Path | None
    """None: the state folder cannot be written, and the plan lives only in this run."""
    plan: Plan
    question: str


def keep_plan(state_folder: Path, plan: Plan, about: dict[str, Any]) -> KeptPlan:
    """``plan`` written to ``<state>/plans/plan_<time>/`` (``plan.json`` and ``metadata.json``, which
    holds ``about``: the question, session, turn and winner)."""
    plan_id = datetime.now().strftime("%Y%m%d_%H%M%S_%f")
    folder = state_folder / PLANS_FOLDER / f"plan_{plan_id}"
    folder.mkdir(parents=True, exist_ok=False)
    write_json(folder / PLAN_FILE, plan.document())
    write_json(folder / METADATA_FILE, {"plan_id": plan_id, "status": "planned", **about})
    return KeptPlan(plan_id, folder, plan, str(about.get("question", "")))


@dataclass
class PlanDesk:
    """The phase plan mode is in (planning, or executing ``chunk`` of ``executing``), the plan made last
    (``made``), and the chunks executed so far with the turn of each."""

    phase: Phase = "plan"
    made: KeptPlan | None = None
    executing: KeptPlan | None = None
    chunk: str = ""
    executed: dict[str, int] = field(default_factory=dict)

    def execute(self, kept: KeptPlan, chunk: str) -> None:
        self.phase, self.executing, self.chunk = "execute", kept, chunk

    def chunk_done(self, turn: int) -> None:
        """The chunk under way ended in ``turn``: kept in the plan's metadata."""
        kept = self.executing
        if kept is None:
            return
        self.executed[self.chunk] = turn
        if kept.folder is None:
            return
        path = kept.folder / METADATA_FILE
        metadata = json.loads(path.read_text(encoding="utf-8"))
        done = len(self.executed) == len(kept.plan.chunks())
        metadata.update(status="executed" if done else "executing", executed_chunks=dict(self.executed))
        write_json(path, metadata)

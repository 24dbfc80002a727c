"""Subagents: the ``spawn_subagents`` tool (MassGen's), which hands each of its tasks to a team of the
agent's own, run nested (``nesting.TeamRunner``) in the subagent's folder within its bounds, and returns
their answers as its result.

A subagent's run belongs to the pool, not to the step that called the tool: when the agent restarts (a
peer's new answer cancels its step) the run goes on, and its answer and workspace are kept (its folder's
``result.json``). The agent sees its subagents in a block before every step and gets a kept or running
subagent's result again by calling the tool with the same task (or id), without running it twice. What
is still running when the turn ends is cancelled."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.config.subagents import SubagentSettings
from massgen_cli.events import AgentUsage, EventSink
from massgen_cli.feature_events import SubagentFinished, SubagentStarted
from massgen_cli.nesting import ParentSpend, TeamOutcome, TeamRunner, TeamTask
from massgen_cli.tools.base import Tool, ToolError, schema
from massgen_cli.tools.subagent_team import team_document

TOOL_NAME = "spawn_subagents"
RESULT_FILE = "result.json"
GRACE_S = 30.0
"""How long past a subagent's own time limit its tool call is waited for (its team closing)."""
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
GUIDANCE = (
    f"{TOOL_NAME} hands independent subtasks to subagents: each is a small team of your own that works in "
    "its own workspace (its path is in the result) and returns its answer. Tasks of one call run at once, "
    "so give them no order. Your subagents' work is kept: after a restart, call it again with the same "
    "task (or subagent_id) to get its result without running it twice."
)
SPEC = ToolSpec(
    TOOL_NAME,
    "Hand independent subtasks to subagents (small teams of your own, run at once); returns their answers.",
    schema(
        {
            "tasks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "task": {"type": "string", "description": "What the subagent is to do, in full."},
                        "subagent_id": {"type": "string", "description": "A short unique name (optional)."},
                    },
                    "required": ["task"],
                },
            }
        },
        ["tasks"],
    ),
)


@dataclass
class SubagentRun:
    """One subagent of ``agent_id``: its task, folder and workspace, and its run (or the kept outcome)."""

    agent_id: str
    subagent_id: str
    task: str
    folder: Path
    running: asyncio.Future[TeamOutcome] = field(repr=False)

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    def described(self) -> dict[str, Any]:
        """The run as the tool's result says it (MassGen's fields)."""
        base = {"subagent_id": self.subagent_id, "workspace": str(self.workspace)}
        if not self.running.done() or self.running.cancelled():
            return {**base, "status": "running" if not self.running.done() else "cancelled", "success": False}
        if (error := self.running.exception()) is not None:
            return {**base, "status": "failed", "success": False, "error": f"{type(error).__name__}: {error}"}
        outcome = self.running.result()
        return {
            **base,
            "status": outcome.status,
            "success": outcome.status == "completed",
            "answer": outcome.answer,
            "error": outcome.reason or None,
            "execution_time_seconds": outcome.seconds,
            "token_usage": {
                "input_tokens": outcome.usage.input_tokens,
                "output_tokens": outcome.usage.output_tokens,
            },
            "cost_usd": outcome.usage.cost_usd,
            "log_path": str(outcome.log_folder) if outcome.log_folder is not None else None,
        }


class SubagentPool:
    """Every agent's subagents in this run: started by the tool, kept across restarts, cancelled when the
    turn ends. ``folder_of`` gives an agent's subagents folder (in its workspace, or the state folder)."""

    def __init__(
        self,
        config: MassGenConfig,
        teams: TeamRunner,
        emit: EventSink,
        folder_of: Callable[[str, Path | None], Path],
        private: tuple[Path, ...] = (),
        spent: Callable[[], str] = lambda: "",
    ):
        """``spent``: why the run's spending caps let no step start (its ``SpendingGate.reached``)."""
        self.config, self.teams, self.emit, self.spent = config, teams, emit, spent
        self.settings: SubagentSettings = config.orchestrator.coordination
        self.folder_of = folder_of
        self.private = private
        self.runs: dict[tuple[str, str], SubagentRun] = {}

    def tool(self, agent_id: str, workspace: Path | None) -> Tool:
        async def spawn(arguments: dict[str, Any]) -> str:
            return await self.spawn(agent_id, workspace, arguments)

        return Tool(SPEC, spawn, grace_s=self.timeout_s() + GRACE_S)

    def timeout_s(self) -> float:
        settings = self.settings
        return min(
            max(settings.subagent_default_timeout, settings.subagent_min_timeout),
            settings.subagent_max_timeout,
        )

    async def spawn(self, agent_id: str, workspace: Path | None, arguments: dict[str, Any]) -> str:
        """Each task's subagent started (or joined, when it runs or ran already), then their results."""
        tasks = _tasks(arguments, self.settings.subagent_max_concurrent)
        runs = [self._run_for(agent_id, workspace, task, given) for task, given in tasks]
        await asyncio.gather(*(asyncio.shield(run.running) for run in runs), return_exceptions=True)
        results = [run.described() for run in runs]
        summary = {
            "total": len(results),
            "completed": sum(result["status"] == "completed" for result in results),
            "failed": sum(result["status"] in ("failed", "cancelled") for result in results),
            "timeout": sum(result["status"] == "timeout" for result in results),
        }
        success = all(result["success"] for result in results)
        payload = {"success": success, "operation": TOOL_NAME, "results": results, "summary": summary}
        return json.dumps(payload, ensure_ascii=False, indent=1)

    def _run_for(self, agent_id: str, workspace: Path | None, task: str, given: str | None) -> SubagentRun:
        subagent_id = given or _id_for(task)
        known = self.runs.get((agent_id, subagent_id))
        if known is not None and known.task != task:
            raise ToolError(f"subagent_id {subagent_id!r} was given another task; choose another id")
        if known is not None and not known.running.cancelled():
            return known
        folder = self.folder_of(agent_id, workspace) / subagent_id
        kept = _kept(folder, task)
        loop = asyncio.get_running_loop()
        running: asyncio.Future[TeamOutcome] = loop.create_future()
        run = SubagentRun(agent_id, subagent_id, task, folder, running)
        if kept is not None:
            running.set_result(kept)
        else:
            run.running = asyncio.ensure_future(self._run(run))
        self.runs[(agent_id, subagent_id)] = run
        return run

    async def _run(self, run: SubagentRun) -> TeamOutcome:
        timeout_s = self.timeout_s()
        document = team_document(self.config, run.agent_id, run.workspace, timeout_s)
        run.workspace.mkdir(parents=True, exist_ok=True)
        depth = self.teams.depth
        self.emit(SubagentStarted(run.agent_id, run.subagent_id, run.task, str(run.workspace), depth))
        spend = ParentSpend(partial(self._charge, run), self.spent)
        team_task = TeamTask(document, run.task, run.folder / ".massgen", timeout_s, self.private, spend)
        try:
            outcome = await self.teams.run(team_task)
        except asyncio.CancelledError:
            self._finished(run, TeamOutcome("cancelled", reason="the turn ended before it finished"))
            raise
        _keep(run, outcome)
        self._finished(run, outcome)
        return outcome

    def _charge(self, run: SubagentRun, spent: AgentUsage) -> None:
        """A call of ``run``'s team counts in this run as the spawning agent's."""
        via = f"{run.subagent_id}/{spent.via}" if spent.via else run.subagent_id
        self.emit(AgentUsage(run.agent_id, spent.usage, via=via))

    def _finished(self, run: SubagentRun, outcome: TeamOutcome) -> None:
        usage = outcome.usage
        self.emit(
            SubagentFinished(
                run.agent_id,
                run.subagent_id,
                outcome.status,
                outcome.answer or "",
                outcome.reason,
                outcome.seconds,
                usage.input_tokens,
                usage.output_tokens,
                usage.cost_usd,
                str(run.workspace),
                str(outcome.log_folder or ""),
            )
        )

    def of(self, agent_id: str) -> list[SubagentRun]:
        return [run for (owner, _), run in self.runs.items() if owner == agent_id]

    def cancel(self) -> list[asyncio.Future[TeamOutcome]]:
        """Every run still going cancelled; what to wait for."""
        going = [run.running for run in self.runs.values() if not run.running.done()]
        for running in going:
            running.cancel()
        return going

    async def close(self) -> None:
        await asyncio.gather(*self.cancel(), return_exceptions=True)


def _tasks(arguments: dict[str, Any], most: int) -> list[tuple[str, str | None]]:
    """The call's tasks, each with the id it asks for; a ``ToolError`` saying what is wrong."""
    tasks = arguments.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ToolError("'tasks' must be a list of {task, subagent_id} objects")
    if len(tasks) > most:
        raise ToolError(f"at most {most} tasks per call (subagent_max_concurrent); {len(tasks)} were given")
    found: list[tuple[str, str | None]] = []
    for item in tasks:
        entry = item if isinstance(item, dict) else {"task": item}
        task, given = entry.get("task"), entry.get("subagent_id")
        if not isinstance(task, str) or not task.strip():
            raise ToolError("every task needs a 'task' text")
        if given is not None and (not isinstance(given, str) or not _ID.match(given)):
            raise ToolError("a subagent_id may use 1 to 64 letters, digits, '_' and '-'")
        found.append((task, given))
    return found


def _id_for(task: str) -> str:
    """A subagent's id from its task: its first words and a hash (the same task, the same id)."""
    words = "_".join(re.findall(r"[a-z0-9]+", task.lower())[:4])[:40] or "task"
    return f"{words}_{hashlib.sha256(task.encode()).hexdigest()[:8]}"


def _keep(run: SubagentRun, outcome: TeamOutcome) -> None:
    """The outcome in the subagent's folder, so a restart (or a later turn) finds it."""
    record = {
        "task": run.task,
        "subagent_id": run.subagent_id,
        "status": outcome.status,
        "answer": outcome.answer,
        "error": outcome.reason or None,
        "seconds": outcome.seconds,
        "usage": outcome.usage.fields(),
        "workspace": str(run.workspace),
        "log_path": str(outcome.log_folder or ""),
    }
    run.folder.mkdir(parents=True, exist_ok=True)
    (run.folder / RESULT_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")


def _kept(folder: Path, task: str) -> TeamOutcome | None:
    """The completed outcome kept in ``folder`` for the same task, if any."""
    try:
        record = json.loads((folder / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("task") != task or record.get("status") != "completed":
        return None
    log = record.get("log_path") or None
    return TeamOutcome(
        "completed",
        record.get("answer"),
        "",
        float(record.get("seconds") or 0),
        log_folder=Path(log) if log else None,
    )

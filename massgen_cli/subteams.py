"""Nested teams: a subagent's team run for one task, in this process and event loop, built as the app
builds a run (a session, the event sink with its ledger and run log, the composed run) in the subagent's
own state folder, bounded in time (and in cost by its config and by the caps of the run that nested it,
whose ledger counts each of its calls as the spawning agent's), and closed whatever happens. A nested run
gives its own features a runner one level deeper, so the depth bound holds all the way down."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from massgen_cli.compose import ComposedRun, Place
from massgen_cli.config.loader import LoadedConfig, load_document
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.turn import RunRecord
from massgen_cli.errors import MassGenError
from massgen_cli.events import AgentUsage, EventSink, Listener, RunEvent, Usage
from massgen_cli.nesting import TeamOutcome, TeamTask
from massgen_cli.runlogs.writer import RunLog
from massgen_cli.session import open_session

CONFIG_NAME = "subagent.yaml"
"""Where the nested config's problems say they are (the document is built in code, never written)."""


class SubTeams:
    """Runs nested teams ``depth`` levels below the user's run."""

    def __init__(self, depth: int = 1):
        self._depth = depth

    @property
    def depth(self) -> int:
        return self._depth

    async def run(self, task: TeamTask) -> TeamOutcome:
        """``task`` run by its team within its time limit; a failure is an outcome, never an exception
        (a cancellation still cancels)."""
        started = time.monotonic()
        try:
            loaded = load_document(task.document, task.state_folder / CONFIG_NAME)
            nested = _NestedRun(loaded, task, SubTeams(self._depth + 1))
        except (MassGenError, OSError) as error:
            return TeamOutcome("failed", reason=f"its team could not be built: {error}")
        try:
            async with asyncio.timeout(task.timeout_s):
                result = await nested.answer(task.task)
            outcome = _outcome(result)
        except TimeoutError:
            outcome = TeamOutcome("timeout", reason=f"its time limit of {task.timeout_s:g}s ran out")
        except MassGenError as error:
            outcome = TeamOutcome("failed", reason=str(error))
        finally:
            await nested.aclose()
        return TeamOutcome(
            outcome.status,
            outcome.answer,
            outcome.reason,
            round(time.monotonic() - started, 3),
            nested.spent(),
            nested.log.directory if nested.log.written else None,
        )


def _outcome(result: TurnResult) -> TeamOutcome:
    """How a nested turn ended: completed with its answer, or stopped by a bound (with what it had)."""
    reason = result.end_reason
    if "spending cap" in reason or "token budget" in reason:
        return TeamOutcome("cost_cap", result.final_answer, reason)
    if result.timed_out:
        return TeamOutcome("timeout", result.final_answer, reason)
    if result.final_answer is None:
        return TeamOutcome("failed", None, reason)
    return TeamOutcome("completed", result.final_answer)


def _charging(charge: Callable[[AgentUsage], None]) -> Listener:
    """A listener of a nested run's events that tells ``charge`` what each call spent."""

    def listen(event: RunEvent) -> None:
        if isinstance(event, AgentUsage):
            charge(event)

    return listen


class _NestedRun:
    """One nested team's session, events, log and composed run."""

    def __init__(self, loaded: LoadedConfig, task: TeamTask, teams: SubTeams):
        config, folder = loaded.config, task.state_folder
        folder.mkdir(parents=True, exist_ok=True)
        self.session = open_session(folder, None, interactive=False, config_path=str(loaded.path))
        self.ledger = Ledger(config.agent_ids)
        self.events = EventSink(self.ledger)
        self.log = RunLog(
            folder,
            self.session.id,
            enabled=config.ui.logging_enabled,
            report=self.events,
            on_open=self.session.add_log_folder,
        )
        self.events.subscribe(self.log)
        above = None
        if task.spend is not None:
            self.events.subscribe(_charging(task.spend.charge))
            above = task.spend.reached
        place = Place(self.session, folder, folder, task.private, teams=teams, spent_above=above)
        try:
            self.run = ComposedRun(loaded, place, RunRecord(self.events, self.log, self.ledger))
        except BaseException:
            self.session.close()
            raise

    async def answer(self, question: str) -> TurnResult:
        await self.run.connect_mcp()
        return await self.run.turns.run(question)

    def spent(self) -> Usage:
        return Usage.total(self.ledger.usage_of_run().values())

    async def aclose(self) -> None:
        try:
            await self.run.aclose()
        finally:
            self.session.close()

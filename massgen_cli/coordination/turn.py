"""One turn: attempts of coordination (each ending with its final answer, which post-evaluation may
reject), then the one ``FinalAnswer``, and what the session, the agents' threads and every attempt part
keep of the outcome.

Each attempt walks the same list of attempt parts (``attempts.AttemptPart``): begun as it starts, rolled
back when post-evaluation rejects it or the turn fails, committed when the turn ends.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from massgen_cli.attempts import AttemptAt, AttemptPart, TurnOutcome
from massgen_cli.backends.base import Purpose
from massgen_cli.coordination.agents import Agent
from massgen_cli.coordination.final import Finale, final_purpose
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.orchestrator import AttemptResult, Orchestrator
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.own_answer import AnswerStep, answer_alone, answer_by_agreement
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.events import EventSink, FinalAnswer, Notice, TurnEnded, Usage
from massgen_cli.messages import Message
from massgen_cli.runlogs.writer import RunLog
from massgen_cli.session import Session


@dataclass(frozen=True)
class Crew:
    """The agents of a run, what their steps draw on, and how they coordinate."""

    agents: list[Agent]
    context: StepContext
    policy: CoordinationPolicy


@dataclass(frozen=True)
class RunRecord:
    """Where a run's events go (the sink, which the view, the run log and the ledger listen to), the run
    log that holds each attempt's folder, and the ledger that tallies the events."""

    emit: EventSink
    log: RunLog
    ledger: Ledger


class TurnRunner:
    """Runs the turns of a session with a fixed crew; ``parts`` are the attempt parts that are on."""

    def __init__(self, crew: Crew, session: Session, parts: Sequence[AttemptPart], record: RunRecord):
        self.crew = crew
        self.policy = crew.policy
        self.agents = crew.agents
        self.session = session
        self.parts = list(parts)
        self.record = record
        self.emit = record.emit
        self.transcripts: dict[str, list[Message]] = {}

    async def run(self, question: str) -> TurnResult:
        """Answer ``question`` as the session's next turn; the session records it if it got an answer."""
        turn, started = self.session.next_turn, time.monotonic()
        self._saving("the session", self.session.begin_turn)
        self.record.ledger.begin_turn()
        for agent in self.agents:
            if agent.guard is not None:
                agent.guard.begin_turn(turn)
        result, at = await self._attempts(question, turn)
        if result.final_answer is not None and result.winner is not None:
            self.emit(FinalAnswer(result.winner, result.final_answer))
        await self._finish_turn(question, result, at, started)
        return result

    async def _attempts(self, question: str, turn: int) -> tuple[TurnResult, AttemptAt]:
        """Attempts until one is accepted (or none may follow); the last attempt's log stays open."""
        max_attempts = self.policy.restarts + 1
        extra = ""
        for attempt in range(1, max_attempts + 1):
            at, result = self._begin_attempt(turn, attempt), None
            may_restart = attempt < max_attempts
            try:
                result = await self._attempt(question, at, extra, final_purpose(may_restart))
                restart = await self._restart_asked(result, at) if may_restart else None
            except BaseException as error:
                self._roll_back(at, whole_turn=True)
                self._close_attempt(result or self._unfinished(question, at, error))
                raise
            if restart is None:
                return result, at
            self.emit(Notice("warning", f"restarting coordination (attempt {attempt + 1}): {restart[0]}"))
            self._roll_back(at, whole_turn=False)
            self._close_attempt(result)
            extra = f"A previous attempt was rejected: {restart[0]}\nInstructions: {restart[1]}"
        raise AssertionError("the last attempt never asks for a restart")

    def _begin_attempt(self, turn: int, attempt: int) -> AttemptAt:
        log = self.record.log.open_attempt(turn, attempt)
        at = AttemptAt(turn, attempt, log.directory if log is not None else None)
        self.record.ledger.begin_attempt()
        for part in self.parts:
            part.begin(at)
        return at

    async def _attempt(self, question: str, at: AttemptAt, extra: str, purpose: Purpose) -> TurnResult:
        scope = AttemptScope(self.session.id, at.turn, at.attempt, self.emit, self.record.log.current)
        coordination = await self._coordinate(question, scope, extra, purpose)
        self.transcripts = coordination.transcripts
        finale = Finale(self.policy, self.crew.context, scope)
        final = await finale.final_answer(self.agents, question, coordination, purpose)
        await asyncio.gather(*(agent.settled() for agent in self.agents))
        return self._result(question, at, coordination, final)

    async def _coordinate(
        self, question: str, scope: AttemptScope, extra: str, purpose: Purpose
    ) -> AttemptResult:
        """The attempt's answers and winner: one agent's own answer, agreement, or votes."""
        policy, context = self.policy, self.crew.context
        if len(self.agents) > 1 and policy.decide_by == "votes":
            orchestrator = Orchestrator(self.agents, policy, context=context, scope=scope)
            return await orchestrator.run(question, extra)
        step = AnswerStep(context, scope, policy.tool_calls_per_step, policy.timing.own_answer_s)
        if len(self.agents) == 1:
            return await answer_alone(self.agents[0], question, step, purpose=purpose)
        return await answer_by_agreement(self.agents, question, step)

    async def _restart_asked(self, result: TurnResult, at: AttemptAt) -> tuple[str, str] | None:
        """Post-evaluation of an attempt that has a final answer: the reason and instructions of a restart."""
        if result.winner is None or result.final_answer is None:
            return None
        scope = AttemptScope(self.session.id, at.turn, at.attempt, self.emit, self.record.log.current)
        winner = next(agent for agent in self.agents if agent.id == result.winner)
        finale = Finale(self.policy, self.crew.context, scope)
        verdict = await finale.restart_asked(winner, result.question, result.final_answer)
        return (verdict.reason, verdict.instructions) if verdict.restart else None

    def _result(
        self, question: str, at: AttemptAt, coordination: AttemptResult, final: str | None
    ) -> TurnResult:
        ledger = self.record.ledger
        spent = ledger.attempt_usage()
        return TurnResult(
            session_id=self.session.id,
            turn=at.turn,
            attempt=at.attempt,
            question=question,
            answers=coordination.answers,
            votes=list(coordination.votes),
            winner=coordination.winner,
            final_answer=final,
            end_reason=coordination.end_reason,
            usage=spent,
            timings_s=coordination.timings_s,
            memory_errors=[],  # the attempt parts' problems join when the turn commits
            tool_calls={
                agent.id: ledger.tool_calls(agent.id)
                for agent in self.agents
                if agent.toolbox or agent.id in ledger.attempt.tool_calls  # the provider's own tools too
            },
            output_folder=self._output_folder(coordination.winner),
            agent_status=dict(ledger.attempt.agent_status),
            warnings=list(ledger.attempt.warnings),
            total_usage=Usage.total(spent.values()),
            turn_usage=Usage.total(ledger.usage_of_turn().values()),
        )

    def _unfinished(self, question: str, at: AttemptAt, error: BaseException) -> TurnResult:
        """What is known of an attempt that ended by an exception (a cancel, a signal, a failure), for its
        ``summary.json``: how it ended, each agent's status, the warnings, tool calls and usage so far."""
        if isinstance(error, KeyboardInterrupt | asyncio.CancelledError):
            reason = "cancelled (interrupted or terminated)"
        else:
            reason = f"failed: {type(error).__name__}: {error}"
        return self._result(question, at, AttemptResult({}, [], None, reason), None)

    def _output_folder(self, winner: str | None) -> str | None:
        """The winner's workspace is the turn's output folder; it is named at the end of the turn."""
        agent = next((agent for agent in self.agents if agent.id == winner), None)
        if agent is None or agent.workspace is None:
            return None
        self.emit(Notice("info", f"Output folder: {agent.workspace} (the workspace of {agent.id})"))
        return str(agent.workspace)

    async def _finish_turn(self, question: str, result: TurnResult, at: AttemptAt, started: float) -> None:
        """Every attempt part, the agents' threads and the session learn the outcome; logs close."""
        outcome = TurnOutcome(at, result.winner, result.final_answer, result.answers, result.votes)
        for part in self.parts:
            try:
                result.memory_errors += await part.commit(outcome)
            except OSError as error:
                self._unsaved(part.part_name, error)
        result.timings_s["total"] = round(time.monotonic() - started, 3)
        await asyncio.gather(*(agent.settled() for agent in self.agents))  # post-evaluation's cost too
        usage = self.record.ledger.usage_of_turn()
        if result.final_answer is not None:
            threads = self.crew.context.threads
            agent_ids = [agent.id for agent in self.agents]
            await threads.remember_turn(question, self.transcripts, result.final_answer, agent_ids)
            self._saving("the agents' threads", threads.save)
            spent = Usage.total(usage.values()).fields()
            complete = partial(
                self.session.complete_turn, at.turn, question, result.final_answer, result.winner, spent
            )
            self._saving("the session", complete)
        tally = Counter(vote.target for vote in result.votes)
        self.emit(TurnEnded(at.turn, result.end_reason, usage, result.winner, dict(tally)))
        self._close_attempt(result)

    def _roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        for part in self.parts:
            self._saving(part.part_name, partial(part.roll_back, at, whole_turn=whole_turn))

    def _saving(self, what: str, save: Callable[[], object]) -> None:
        """A save the disk refuses is said, and the turn goes on (it is tried again at the next save)."""
        try:
            save()
        except OSError as error:
            self._unsaved(what, error)

    def _unsaved(self, what: str, error: OSError) -> None:
        self.emit(Notice("degraded", f"{what} could not be saved: {error}"))

    def _close_attempt(self, result: TurnResult | None) -> None:
        self.record.log.close_attempt(result.to_dict() if result is not None else None)

"""One turn: attempts of coordination (each ending with its final answer, which post-evaluation may
reject), then the one ``FinalAnswer``, and what the session, the agents' threads and every attempt part
keep of the outcome. The session keeps every turn, answered, failed or cancelled, with what it spent.

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

from massgen_cli.agent.data import Agent
from massgen_cli.attachments import noted
from massgen_cli.attempts import AttemptAt, AttemptPart, TurnOutcome
from massgen_cli.backends.base import Purpose
from massgen_cli.coordination.attempt_summary import AttemptSummary
from massgen_cli.coordination.final import Finale, final_purpose
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.orchestrator import AttemptResult, Orchestrator
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.own_answer import AnswerStep, answer_alone, answer_by_agreement
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import AttemptScope, Halt, StepContext
from massgen_cli.events import EventSink, FinalAnswer, Notice, TurnEnded, Usage
from massgen_cli.messages import Message
from massgen_cli.runlogs.writer import RunLog
from massgen_cli.session import Exchange, Session, TurnStatus
from massgen_cli.tools.attachments import Attached


@dataclass(frozen=True)
class Crew:
    """The agents of a run, what their steps draw on, and how they coordinate."""

    agents: list[Agent]
    context: StepContext
    policy: CoordinationPolicy
    halt: Halt
    """What may halt the run, read where a turn decides whether to go on (the spending caps are one;
    ``NoHalt``: nothing)."""


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
        self.summary = AttemptSummary(session.id, crew.agents, record.ledger, record.emit)
        self.transcripts: dict[str, list[Message]] = {}
        self.halt = crew.halt
        self.attached: dict[str, Attached] = {}
        """What each agent's question carries this turn (images, files), and what is not sent and why."""

    async def run(self, question: str) -> TurnResult:
        """Answer ``question`` as the session's next turn; the session records how it ended."""
        started = time.monotonic()
        self.attached = await attachments_of(self.agents, question)
        turn = take_turn(self.session, self.emit)
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
                restart = await self._finale(at).restart_for(self.agents, result) if may_restart else None
            except BaseException as error:
                try:
                    await self._settled()  # what the cut calls spent is told before their log closes
                finally:
                    self._end_unanswered(question, at, result, error)
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
        offline = self.session.numbered_offline(turn)
        at = AttemptAt(turn, attempt, log.directory if log is not None else None, offline)
        self.record.ledger.begin_attempt()
        for part in self.parts:
            part.begin(at)
        for note in dict.fromkeys(note for attached in self.attached.values() for note in attached.notes):
            self.emit(Notice("warning", note))  # said in each attempt, which goes without what it names
        return at

    async def _attempt(self, question: str, at: AttemptAt, extra: str, purpose: Purpose) -> TurnResult:
        finale = self._finale(at)
        coordination = await self._coordinate(question, finale.scope, extra, purpose)
        self.transcripts = coordination.transcripts
        final = await finale.final_answer(self.agents, question, coordination, purpose)
        await self._settled()
        return self.summary.of(question, at, coordination, final)

    def _finale(self, at: AttemptAt) -> Finale:
        """The end of the attempt ``at``: its final answer and post-evaluation."""
        attachments = {agent_id: attached.attachments for agent_id, attached in self.attached.items()}
        log = self.record.log.current
        scope = AttemptScope(self.session.id, at.turn, at.attempt, self.emit, log, self.halt, attachments)
        return Finale(self.policy, self.crew.context, scope)

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

    async def _finish_turn(self, question: str, result: TurnResult, at: AttemptAt, started: float) -> None:
        """Every attempt part, the agents' threads and the session learn the outcome; logs close."""
        outcome = TurnOutcome(at, result.winner, result.final_answer, result.answers, result.votes)
        for part in self.parts:
            try:
                result.memory_errors += await part.commit(outcome)
            except OSError as error:
                self._unsaved(part.part_name, error)
        result.timings_s["total"] = round(time.monotonic() - started, 3)
        await self._settled()  # post-evaluation's cost too
        usage = self.record.ledger.usage_of_turn()
        if result.final_answer is not None:
            threads = self.crew.context.threads
            agent_ids = [agent.id for agent in self.agents]
            attached = {a: [x.placeholder for x in got.attachments] for a, got in self.attached.items()}
            await threads.remember_turn(question, self.transcripts, result.final_answer, agent_ids, attached)
            self._saving("the agents' threads", threads.save)
        self._record_turn(result, "answered" if result.final_answer is not None else "failed")
        tally = Counter(vote.target for vote in result.votes)
        self.emit(TurnEnded(at.turn, result.end_reason, usage, result.winner, dict(tally), result.timed_out))
        self._close_attempt(result)

    def _end_unanswered(
        self, question: str, at: AttemptAt, result: TurnResult | None, error: BaseException
    ) -> None:
        """A turn cut off by ``error`` (cancelled, or failed from outside): its attempt is rolled back and
        summed up as far as it got, and the session keeps the turn with what it spent."""
        ended = self.summary.unfinished(question, at, error)
        self._roll_back(at, whole_turn=True)
        self._close_attempt(result or ended)
        cancelled = isinstance(error, KeyboardInterrupt | asyncio.CancelledError)
        self._record_turn(ended, "cancelled" if cancelled else "failed")

    def _record_turn(self, result: TurnResult, status: TurnStatus) -> None:
        """The session keeps how the turn ended and what all its calls spent (the ledger's figure, which
        the turn's summary and its log's events give too)."""
        spent = Usage.total(self.record.ledger.usage_of_turn().values()).fields()
        answered = status == "answered"
        answer, winner = (result.final_answer or "", result.winner) if answered else ("", None)
        sent = dict.fromkeys(x.placeholder for got in self.attached.values() for x in got.attachments)
        asked = noted(result.question, list(sent))
        turn = Exchange(result.turn, asked, answer, winner, spent, status, result.end_reason)
        self._saving("the session", partial(self.session.record_turn, turn))

    async def _settled(self) -> None:
        """Every call that ended is priced and its usage told."""
        await asyncio.gather(*(agent.settled() for agent in self.agents))

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


def take_turn(session: Session, emit: EventSink) -> int:
    """The turn's number, as the session takes it (from the memory server that keeps it, when there is
    one); a save the disk refuses is said, and the number stands."""
    try:
        return session.begin_turn()
    except OSError as error:
        emit(Notice("degraded", f"the session could not be saved: {error}"))
        return session.record.turns_started
    finally:
        problem, session.mirror_problem = session.mirror_problem, None
        if problem:  # the memory server was lost as the turn began: said before the turn's lines
            emit(Notice("degraded", problem))


async def attachments_of(agents: Sequence[Agent], question: str) -> dict[str, Attached]:
    """Each agent's attachments for ``question``, its files read at once (in threads)."""
    reading = [(agent.id, agent.media) for agent in agents if agent.media is not None]
    found = await asyncio.gather(*(asyncio.to_thread(media.for_question, question) for _, media in reading))
    return dict(zip([agent_id for agent_id, _ in reading], found, strict=True))

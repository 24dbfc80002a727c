"""One attempt of coordination: parallel steps, agent restarts on new answers, votes, a winner.

Every agent works at once. A new answer invalidates all votes and, by default, restarts the other
agents: their in-flight steps are cancelled, so no tokens go to superseded work, and their next step
shows the new answer. MassGen's ways are there too (``peer_updates``): the others go on, and the new
answer reaches them in their next tool result (``inject``) or when they start again (``defer``); a vote
cast on answers an agent has not seen is not counted and it starts again. A vote for a peer with no
answer yet is refused and asked again (MassGen's way); if the agent still names that peer while the peer
is at work, it waits for new answers instead of failing. An agent that votes waits;
when every agent has voted (or can do no more) the tally picks the winner. Limits (answers per agent and
in all, MassGen's fairness cap, steps per agent, step timeout, turn timeout, a halt of the run) end
the attempt deterministically with the best answer available and say why. One agent's step is
``WorkflowStep``'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from massgen_cli.agent.data import Agent, StepRefused
from massgen_cli.attempts import Vote
from massgen_cli.coordination.board import Board
from massgen_cli.coordination.decisions import NewAnswer, VoteFor
from massgen_cli.coordination.extension import StepAt
from massgen_cli.coordination.outcome import refused_end
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.tally import best_so_far, pick_winner
from massgen_cli.coordination.toolloop import ToolsRefused
from massgen_cli.coordination.workflow_step import StepOutcome, Task, WorkflowStep
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentState, AgentStatus, Notice, VoteCast
from massgen_cli.messages import Message


@dataclass
class AttemptResult:
    """The coordination result of one attempt."""

    answers: dict[str, str]
    votes: list[Vote]
    winner: str | None
    end_reason: str
    timings_s: dict[str, float] = field(default_factory=dict)
    transcripts: dict[str, list[Message]] = field(default_factory=dict)
    timed_out: bool = False
    """The attempt was ended by its time limit (the turn's, or a single agent's answer)."""
    halted: str = ""
    """Why the run halted and ended the attempt early (a refused step, or a halt such as a spent cap); its
    final answer is the winning answer as it is."""


class Orchestrator:
    """Runs one attempt over ``agents`` for ``question``, at ``scope`` (whose ``emit`` gets the events).

    Steps are assembled by ``context``: the agents' threads and the extensions that are on, which hear
    of every decision, new answer, vote and restart. With none, the messages agents get are unchanged.
    """

    def __init__(
        self,
        agents: Sequence[Agent],
        policy: CoordinationPolicy | None = None,
        *,
        context: StepContext | None = None,
        scope: AttemptScope | None = None,
    ):
        self.policy = policy or CoordinationPolicy()
        self.context = context or StepContext()
        self.scope = scope or AttemptScope()
        self.emit = self.scope.emit
        self.agents = {agent.id: agent for agent in agents}
        self.order = [agent.id for agent in agents]
        self.turn_timeout_s = self.policy.timing.attempt_s
        self.board = Board(self.order)
        self.workflow = WorkflowStep(self.policy, self.context, self.scope, self.board, Task(""))
        self.out: set[str] = set()
        """Agents out for the rest of the attempt (their tool calls were refused too often)."""
        self.held: dict[str, str] = {}
        """Agents not started until peers catch up (fairness) or every agent has answered, and why."""
        self.awaiting: dict[str, tuple[str, int]] = {}
        """Agents whose vote named a peer at work before its answer existed: the peer, and the answer set
        they saw (a new answer starts them again, as MassGen restarts an agent with new answers)."""
        self.transcripts: dict[str, list[Message]] = {}
        self.votes: dict[str, Vote] = {}
        self.tasks: dict[str, asyncio.Task[StepOutcome]] = {}
        self.abandoned: list[asyncio.Task[StepOutcome]] = []
        self.restart_due: set[str] = set()
        self.end_reason = ""
        self.timed_out = False
        self.halted = ""
        """Why the run halted the attempt's steps, once it did."""

    async def run(self, question: str, extra_instructions: str = "") -> AttemptResult:
        """Coordinate until every agent has voted or can do no more, or a limit is reached."""
        started = time.monotonic()
        self.workflow.task = Task(question, extra_instructions)
        for agent_id in self.order:
            self._start(agent_id)
        try:
            async with asyncio.timeout(self.turn_timeout_s):
                await self._drive()
        except TimeoutError:  # said as the turn ends, with its reason
            self.timed_out = True
            reached = f"orchestrator timeout ({self.turn_timeout_s:g}s) reached"
            self.end_reason = f"{reached}; best available answer used" if self.board.answers else reached
        finally:
            await self._cancel_all()
        answers = self.board.answers
        winner, reason = _outcome(self.board, list(self.votes.values()), self.halted)
        self.end_reason = self.end_reason or reason
        return AttemptResult(
            answers=dict(answers),
            votes=[self.votes[agent_id] for agent_id in self.order if agent_id in self.votes],
            winner=winner,
            end_reason=self.end_reason,
            timings_s={"coordination": round(time.monotonic() - started, 3)},
            transcripts=dict(self.transcripts),
            timed_out=self.timed_out,
            halted=self.halted,
        )

    async def _drive(self) -> None:
        while self.tasks or self.held:
            if not self.tasks:  # only held agents are left: nothing can change what they wait for
                self._release(forced=True)
                continue
            done, _ = await asyncio.wait(self.tasks.values(), return_when=asyncio.FIRST_COMPLETED)
            for agent_id in list(self.order):
                task = self.tasks.get(agent_id)
                if task is not None and task in done:
                    del self.tasks[agent_id]
                    await self._settle(agent_id, task)
            self._release(forced=False)

    async def _settle(self, agent_id: str, task: asyncio.Task[StepOutcome]) -> None:
        restart_due = agent_id in self.restart_due
        self.restart_due.discard(agent_id)
        try:
            outcome = task.result()
        except TimeoutError:
            self._finish(agent_id, "failed", f"step timed out after {self.policy.timing.step_s:g}s")
            return
        except BackendError as error:
            self._finish(agent_id, "failed", str(error))
            return
        except ToolsRefused as error:  # MassGen's hard round timeout: out for the rest of the attempt
            self.out.add(agent_id)
            self._finish(agent_id, "failed", str(error))
            return
        except StepRefused as error:
            self._stop(agent_id, str(error))
            return
        if outcome.decision is not None:
            self.transcripts[agent_id] = outcome.transcript
            await self.workflow.decided(self.agents[agent_id], outcome)
        if isinstance(outcome.decision, NewAnswer):
            await self._accept_answer(agent_id, outcome.decision.content)
        elif isinstance(outcome.decision, VoteFor):
            await self._accept_vote(agent_id, outcome)
        elif restart_due or (outcome.waiting_for and outcome.version != self.board.version):
            self._begin_again(agent_id)
        elif outcome.waiting_for in (*self.tasks, *self.held):  # at work: its answer may still come
            self.awaiting[agent_id] = (outcome.waiting_for, outcome.version)
            self._start(agent_id)  # held until a new answer arrives
        else:
            self._finish(agent_id, "done", outcome.note or "no decision")

    async def _accept_answer(self, agent_id: str, content: str) -> None:
        self.board.add_answer(agent_id, content)
        self.emit(AgentStatus(agent_id, "answered", content))
        await self.context.answered(self._at(agent_id), content)
        if self.votes:
            self.emit(
                Notice("info", f"new answer from {agent_id}: {len(self.votes)} earlier vote(s) cleared")
            )
        self.votes.clear()
        self.board.resting -= set(self.order)
        others = [other for other in self.order if other != agent_id]
        if self.policy.peer_updates != "restart":
            self._start(agent_id)
            for other in others:  # working agents go on; idle ones start again to vote anew
                if other not in self.tasks and other not in self.held:
                    self._begin_again(other)
                elif self.board.answer_counts[other] == 0 or self.policy.peer_updates == "none":
                    self.board.seen[other] = self.board.version  # never interrupted (MassGen)
            return
        cancelled, again = self._cancel_steps(others)
        self._start(agent_id)  # its next step goes out while the others' streams are being closed
        await asyncio.gather(*cancelled, return_exceptions=True)
        for other in again:
            self._begin_again(other)

    async def _accept_vote(self, agent_id: str, outcome: StepOutcome) -> None:
        assert isinstance(outcome.decision, VoteFor)
        if outcome.version != self.board.version:
            self.emit(AgentStatus(agent_id, "restarted", "vote was cast on an outdated set of answers"))
            self._start(agent_id)
            return
        vote = Vote(agent_id, outcome.decision.target, outcome.decision.reason)
        self.votes[agent_id] = vote
        self.board.resting.add(agent_id)
        self.emit(VoteCast(vote.voter, vote.target, vote.reason))
        await self.context.voted(self._at(agent_id), vote)

    def _at(self, agent_id: str) -> StepAt:
        return self.scope.step_at(self.agents[agent_id], self.workflow.task.question)

    def _cancel_steps(self, agent_ids: list[str]) -> tuple[list[asyncio.Task[StepOutcome]], list[str]]:
        """Cancel the agents' running steps at once; returns those steps, and the agents to start again
        once they are through."""
        cancelled: list[asyncio.Task[StepOutcome]] = []
        again = []
        for agent_id in agent_ids:
            task = self.tasks.get(agent_id)
            if task is not None and task.done():
                # It finished before it could see the new answer: ``_drive`` settles it first (an answer
                # is kept, an outdated vote is redone), then it starts again.
                self.restart_due.add(agent_id)
                continue
            if task is not None:
                del self.tasks[agent_id]
                task.cancel()
                cancelled.append(task)
            again.append(agent_id)
        return cancelled, again

    def _begin_again(self, agent_id: str) -> None:
        self.context.restarted(agent_id)
        self.emit(AgentStatus(agent_id, "restarted", "new answers to consider"))
        self._start(agent_id)

    def _start(self, agent_id: str, *, hold: bool = True) -> None:
        if agent_id in self.out:
            return
        running = self.tasks.pop(agent_id, None)
        if running is not None and not running.done():  # never two steps of one agent at once
            running.cancel()
            self.abandoned.append(running)
        if halted := self.scope.halt.reached():
            self._stop(agent_id, halted)
            return
        if self.board.steps[agent_id] >= self.policy.max_steps_per_agent:
            self._finish(agent_id, "done", f"step cap ({self.policy.max_steps_per_agent}) reached")
            return
        reason = self._hold_reason(agent_id) if hold else ""
        if reason:
            if agent_id not in self.held:
                self.emit(Notice("info", f"[{agent_id}] waits: {reason}"))
            self.held[agent_id] = reason
            return
        self.held.pop(agent_id, None)
        self.awaiting.pop(agent_id, None)
        self.emit(AgentStatus(agent_id, "working"))
        step = self.workflow.run(self.agents[agent_id])
        self.tasks[agent_id] = asyncio.create_task(step, name=f"step:{agent_id}")

    def _hold_reason(self, agent_id: str) -> str:
        """Why ``agent_id`` does not start now (its vote named a peer whose answer is not in yet, or
        MassGen's fairness pause, or waiting for every agent's first answer), or ""."""
        rules, board = self.policy.answers, self.board
        peer, seen = self.awaiting.get(agent_id, ("", board.version))
        if seen == board.version and peer in (*self.tasks, *self.held):
            return f"its vote named {peer}, whose answer is not in yet; it goes on when new answers arrive"
        if rules.defer_voting and board.waiting_for_all(agent_id, rules.per_agent):
            return "at its answer cap until every agent has answered"
        lead_cap = rules.lead_cap
        if rules.fairness and board.answer_counts[agent_id] and not board.lead_allowed(agent_id, lead_cap):
            return f"fairness: {lead_cap} answer(s) ahead of the slowest active peer until it catches up"
        return ""

    def _release(self, *, forced: bool) -> None:
        """Start the held agents whose reason has passed (all of them when ``forced``)."""
        for agent_id in [agent_id for agent_id in self.order if agent_id in self.held]:
            if forced or not self._hold_reason(agent_id):  # forced: no one else can change its reason
                del self.held[agent_id]
                self._start(agent_id, hold=False)

    def _finish(self, agent_id: str, status: AgentState, detail: str) -> None:
        """The agent does no more in this attempt (until a new answer restarts it)."""
        self.board.resting.add(agent_id)
        self.emit(AgentStatus(agent_id, status, detail))

    def _stop(self, agent_id: str, halted: str) -> None:
        """The run halted (``halted`` says why): the agent starts no new step in this attempt."""
        self.halted = self.halted or halted
        self.held.pop(agent_id, None)
        self._finish(agent_id, "done", halted)

    async def _cancel_all(self) -> None:
        tasks = [*self.tasks.values(), *self.abandoned]
        self.tasks.clear()
        self.abandoned.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _outcome(board: Board, votes: list[Vote], halted: str) -> tuple[str | None, str]:
    """The winner and why the attempt ended (unless its timeout said so first): a halt ends it with the
    best answer so far; otherwise every agent voted, or could do no more."""
    if halted:
        winner = best_so_far(votes, board.answers, board.order, board.answered_at)
        return winner, refused_end(halted, answered=winner is not None)
    winner = pick_winner(votes, board.answers, board.order)
    if not board.answers:
        return None, "no agent produced an answer"
    if len(votes) == len(board.order):
        return winner, "all agents voted"
    return winner, "every agent finished; not all of them voted"

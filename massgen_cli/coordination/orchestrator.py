"""One attempt of coordination: parallel steps, agent restarts on new answers, votes, a winner.

Every agent works at once. A new answer invalidates all votes and restarts the other agents: their
in-flight steps are cancelled, so no tokens go to superseded work, and their next step shows the new
answer. An agent that votes waits; when every agent has voted (or can do no more) the tally picks
the winner. Limits (answers per agent, steps per agent, step timeout, turn timeout) end the attempt
deterministically with the best answer available and say why.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from massgen_cli.backends.base import Completion, Request
from massgen_cli.config.orchestrator import OrchestratorConfig, TimeoutSettings
from massgen_cli.coordination import prompts
from massgen_cli.coordination.agents import Agent, assistant_echo, decision_transcript
from massgen_cli.coordination.decisions import (
    NEW_ANSWER,
    SHARE_MEMORY,
    SHARE_TOOL,
    Decision,
    NewAnswer,
    VoteFor,
    decision_schema,
    parse_decision,
    workflow_tools,
)
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.tally import Vote, alias_map, pick_winner, resolve_target
from massgen_cli.coordination.toolloop import json_tool_instructions, run_with_tools, tool_activity
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentStatus, Notice
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.block import SharedMemory
from massgen_cli.memory.shared.entries import Scope
from massgen_cli.messages import Message


@dataclass(frozen=True)
class StepOutcome:
    """What one agent's step (with its re-asks) ended with; ``version`` is the answer set it saw."""

    decision: Decision | None
    version: int
    note: str = ""
    transcript: list[Message] = field(default_factory=list)
    reasoning: str = ""
    tools_used: str = ""


@dataclass
class AttemptResult:
    """The coordination result of one attempt."""

    answers: dict[str, str]
    votes: list[Vote]
    winner: str | None
    end_reason: str
    timings_s: dict[str, float] = field(default_factory=dict)
    transcripts: dict[str, list[Message]] = field(default_factory=dict)


class Orchestrator:
    """Runs one attempt over ``agents`` for ``question``, at ``scope`` (whose ``emit`` gets the events).

    Steps are assembled by ``context``: the agents' threads, long-term memory, and shared memory in any
    combination of conversation (answers and votes of all agents), persistent (long-term knowledge,
    turn-aware) and entries (scoped entries and slots, written with the ``share_memory`` tool). With
    none, the messages agents get are unchanged.
    """

    def __init__(
        self,
        agents: Sequence[Agent],
        settings: OrchestratorConfig | None = None,
        *,
        context: StepContext | None = None,
        scope: AttemptScope | None = None,
        turn_timeout_s: float | None = None,
    ):
        self.settings = settings or OrchestratorConfig()
        self.context = context or StepContext()
        self.scope = scope or AttemptScope()
        self.emit = self.scope.emit
        self.agents = {agent.id: agent for agent in agents}
        self.order = [agent.id for agent in agents]
        self.question_recorded: set[str] = set()
        self.transcripts: dict[str, list[Message]] = {}
        self.turn_timeout_s = turn_timeout_s or TimeoutSettings().orchestrator_timeout_seconds
        self.answers: dict[str, str] = {}
        self.answer_counts: Counter[str] = Counter()
        self.votes: dict[str, Vote] = {}
        self.steps: Counter[str] = Counter()
        self.version = 0
        self.tasks: dict[str, asyncio.Task[StepOutcome]] = {}
        self.abandoned: list[asyncio.Task[StepOutcome]] = []
        self.restart_due: set[str] = set()
        self.end_reason = ""

    @property
    def shared(self) -> SharedMemory:
        return self.context.shared

    @property
    def memory(self) -> MemoryRuntime | None:
        return self.context.memory

    async def run(self, question: str, extra_instructions: str = "") -> AttemptResult:
        """Coordinate until every agent has voted or can do no more, or a limit is reached."""
        started = time.monotonic()
        self.question, self.extra = question, extra_instructions
        for agent_id in self.order:
            self._start(agent_id)
        try:
            async with asyncio.timeout(self.turn_timeout_s):
                await self._drive()
        except TimeoutError:
            self.end_reason = (
                f"orchestrator timeout ({self.turn_timeout_s:g}s) reached; best available answer used"
            )
            self.emit(Notice("warning", self.end_reason))
        finally:
            await self._cancel_all()
        winner = pick_winner(list(self.votes.values()), self.answers, self.order)
        if not self.end_reason:
            self.end_reason = self._natural_end_reason()
        return AttemptResult(
            answers=dict(self.answers),
            votes=[self.votes[agent_id] for agent_id in self.order if agent_id in self.votes],
            winner=winner,
            end_reason=self.end_reason,
            timings_s={"coordination": round(time.monotonic() - started, 3)},
            transcripts=dict(self.transcripts),
        )

    def _natural_end_reason(self) -> str:
        if not self.answers:
            return "no agent produced an answer"
        if len(self.votes) == len(self.order):
            return "all agents voted"
        return "every agent finished; not all of them voted"

    async def _drive(self) -> None:
        while self.tasks:
            done, _ = await asyncio.wait(self.tasks.values(), return_when=asyncio.FIRST_COMPLETED)
            for agent_id in list(self.order):
                task = self.tasks.get(agent_id)
                if task is not None and task in done:
                    del self.tasks[agent_id]
                    await self._settle(agent_id, task)

    async def _settle(self, agent_id: str, task: asyncio.Task[StepOutcome]) -> None:
        restart_due = agent_id in self.restart_due
        self.restart_due.discard(agent_id)
        try:
            outcome = task.result()
        except TimeoutError:
            self._finish(agent_id, "failed", f"step timed out after {self.settings.step_timeout_seconds:g}s")
            return
        except BackendError as error:
            self._finish(agent_id, "failed", str(error))
            return
        if outcome.decision is not None:
            self.transcripts[agent_id] = outcome.transcript
            self._record(agent_id, outcome)
        if outcome.decision is not None and outcome.tools_used:  # peers see what work backs a decision
            await self.shared.record(agent_id, outcome.tools_used, self.scope.turn, self.scope.attempt)
        if isinstance(outcome.decision, NewAnswer):
            await self._accept_answer(agent_id, outcome.decision.content)
        elif isinstance(outcome.decision, VoteFor):
            await self._accept_vote(agent_id, outcome)
        elif restart_due:
            self._begin_again(agent_id)
        else:
            self._finish(agent_id, "done", outcome.note or "no decision")

    async def _accept_answer(self, agent_id: str, content: str) -> None:
        self.answers[agent_id] = content
        self.answer_counts[agent_id] += 1
        self.version += 1
        await self.context.snapshot(self.agents[agent_id])
        self.emit(AgentStatus(agent_id, "answered", content))
        await self.shared.record(agent_id, content, self.scope.turn, self.scope.attempt)
        if self.votes:
            self.emit(
                Notice("info", f"new answer from {agent_id}: {len(self.votes)} earlier vote(s) cleared")
            )
        self.votes.clear()
        cancelled, again = self._cancel_steps([other for other in self.order if other != agent_id])
        self._start(agent_id)  # its next step goes out while the others' streams are being closed
        await asyncio.gather(*cancelled, return_exceptions=True)
        for other in again:
            self._begin_again(other)

    async def _accept_vote(self, agent_id: str, outcome: StepOutcome) -> None:
        assert isinstance(outcome.decision, VoteFor)
        if outcome.version != self.version:
            self.emit(AgentStatus(agent_id, "restarted", "vote was cast on an outdated set of answers"))
            self._start(agent_id)
            return
        vote = Vote(agent_id, outcome.decision.target, outcome.decision.reason)
        self.votes[agent_id] = vote
        self.emit(AgentStatus(agent_id, "voted", f"{vote.target}: {vote.reason}"))
        await self.shared.record(
            agent_id, f"Voted for {vote.target}: {vote.reason}", self.scope.turn, self.scope.attempt
        )

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
        if self.memory is not None:
            self.memory.refresh(agent_id)
        self.emit(AgentStatus(agent_id, "restarted", "new answers to consider"))
        self._start(agent_id)

    def _start(self, agent_id: str) -> None:
        running = self.tasks.pop(agent_id, None)
        if running is not None and not running.done():  # never two steps of one agent at once
            running.cancel()
            self.abandoned.append(running)
        if self.steps[agent_id] >= self.settings.max_steps_per_agent:
            self._finish(agent_id, "done", f"step cap ({self.settings.max_steps_per_agent}) reached")
            return
        self.emit(AgentStatus(agent_id, "working"))
        self.tasks[agent_id] = asyncio.create_task(self._step_with_reasks(agent_id), name=f"step:{agent_id}")

    def _finish(self, agent_id: str, status: str, detail: str) -> None:
        """The agent does no more in this attempt (until a new answer restarts it)."""
        self.emit(AgentStatus(agent_id, status, detail))

    async def _cancel_all(self) -> None:
        tasks = [*self.tasks.values(), *self.abandoned]
        self.tasks.clear()
        self.abandoned.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _step_with_reasks(self, agent_id: str) -> StepOutcome:
        """One step plus bounded re-asks when it ends without a valid decision."""
        agent, version = self.agents[agent_id], self.version
        messages = await self._step_messages(agent)
        note = "no decision"
        for reask in range(self.settings.max_reasks + 1):
            if self.steps[agent_id] >= self.settings.max_steps_per_agent:
                return StepOutcome(None, version, f"step cap ({self.settings.max_steps_per_agent}) reached")
            self.steps[agent_id] += 1
            write_back = self.context.thread_writer(agent_id, system_prompts=1) if reask == 0 else None
            try:
                step = await asyncio.wait_for(
                    run_with_tools(
                        agent,
                        self._request(agent, messages),
                        self.emit,
                        self.scope.log,
                        limit=self.settings.max_tool_calls_per_step,
                        decide_now=prompts.TOOL_LIMIT,
                        on_compressed=write_back,
                        recall=partial(self.context.recalled, agent, self.question),
                    ),
                    self.settings.step_timeout_seconds,
                )
            except asyncio.CancelledError:  # superseded by a peer's answer: not this agent's step to count
                self.steps[agent_id] -= 1
                raise
            completion = step.completion
            self._share(agent_id, completion)
            decision, problem = self._validate(agent_id, parse_decision(completion))
            if decision is not None:
                transcript = [*step.exchange, *decision_transcript(completion, _receipt(decision))]
                used = tool_activity(step.exchange)
                return StepOutcome(decision, version, "", transcript, completion.reasoning, used)
            note = problem
            reask_message: Message = {"role": "user", "content": problem}
            messages = [*messages, *step.exchange, assistant_echo(completion), reask_message]
        return StepOutcome(None, version, f"no valid decision after re-asks: {note}")

    def _validate(self, agent_id: str, decision: Decision | None) -> tuple[Decision | None, str]:
        if decision is None:
            return None, prompts.REASK
        if isinstance(decision, NewAnswer):
            if not self._can_answer(agent_id):
                return None, "You have reached your answer limit; vote for the best existing answer."
            return decision, ""
        target = resolve_target(decision.target, self.order)
        if target is None or target not in self.answers:
            choices = ", ".join(self._vote_aliases()) or "none yet"
            return None, f"'{decision.target}' is not an agent with an answer (choose from: {choices})."
        return VoteFor(target, decision.reason), ""

    def _can_answer(self, agent_id: str) -> bool:
        cap = self.settings.max_new_answers_per_agent
        return cap is None or self.answer_counts[agent_id] < cap

    def _vote_aliases(self) -> list[str]:
        return [alias for alias, agent_id in alias_map(self.order).items() if agent_id in self.answers]

    async def _step_messages(self, agent: Agent) -> list[Message]:
        uses_json = not agent.backend.capabilities.tool_calls
        tool_text = json_tool_instructions(agent.toolbox.specs) if uses_json and agent.toolbox else ""
        system = prompts.system_message(
            agent.config.system_message, agent.toolbox.instructions(), tool_text, uses_json=uses_json
        )
        peers = await self.context.peers_note(agent)
        extra = "\n\n".join(part for part in (self.extra, peers) if part)
        task = prompts.task_message(self.question, self.answers, self.order, extra)
        return await self.context.messages(agent, self.scope.turn, self.question, system, task)

    def _share(self, agent_id: str, completion: Completion) -> None:
        """Scoped entries an agent wrote with ``share_memory`` in this step."""
        entries = self.shared.entries
        for call in completion.tool_calls:
            if call.name != SHARE_MEMORY or entries is None:
                continue
            kind, content = (
                str(call.arguments.get("type", "")).strip(),
                str(call.arguments.get("content", "")),
            )
            scope: Scope = "conversation" if call.arguments.get("scope") == "conversation" else "round"
            if kind and content:
                entries.add(kind, content, scope, agent_id, self.scope.turn, self.scope.attempt)
                self.emit(Notice("info", f"[{agent_id}] shared {kind} ({scope})"))

    def _record(self, agent_id: str, outcome: StepOutcome) -> None:
        """Long-term memory gets the question (once a turn), the reasoning and a new answer."""
        if self.memory is None:
            return
        messages: list[Message] = []
        if agent_id not in self.question_recorded:
            self.question_recorded.add(agent_id)
            messages.append({"role": "user", "content": self.question})
        messages += outcome.transcript  # tool exchanges (the recording rules pick what to keep)
        if isinstance(outcome.decision, NewAnswer) and not _calls(outcome.transcript, NEW_ANSWER):
            messages.append({"role": "assistant", "content": outcome.decision.content})
        self.memory.record(agent_id, messages, reasoning=outcome.reasoning)

    def _request(self, agent: Agent, messages: list[Message]) -> Request:
        can_answer, targets = self._can_answer(agent.id), self._vote_aliases()
        if agent.backend.capabilities.tool_calls:
            tools = workflow_tools(can_answer, targets) + (SHARE_TOOL,) * (self.shared.entries is not None)
            return Request(messages, tools=tools, purpose="coordination")
        return Request(messages, response_schema=decision_schema(can_answer, targets), purpose="coordination")


def _calls(messages: list[Message], name: str) -> bool:
    """Whether an assistant message in ``messages`` calls the tool ``name``."""
    return any(call["function"]["name"] == name for m in messages for call in m.get("tool_calls") or ())


def _receipt(decision: Decision) -> str:
    return "Answer recorded." if isinstance(decision, NewAnswer) else f"Vote recorded for {decision.target}."

"""One agent's coordination step: the request (the question, the answers so far under their aliases,
the workflow tools or a JSON schema of them), the tool loop, and bounded re-asks until the reply ends
with a valid ``new_answer`` or ``vote``. The extensions see each reply and may veto a decision; what a
step decided reaches them through ``decided``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial

from massgen_cli.agent.data import Agent, assistant_echo, decision_transcript
from massgen_cli.backends.base import Completion, Request
from massgen_cli.coordination import prompts
from massgen_cli.coordination.board import Board
from massgen_cli.coordination.call_answers import answering
from massgen_cli.coordination.decisions import (
    NEW_ANSWER,
    Decision,
    NewAnswer,
    VoteFor,
    decision_schema,
    parse_decision,
    workflow_tools,
)
from massgen_cli.coordination.extension import StepDone
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.step_watch import CoordinationWatch
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.tally import resolve_target
from massgen_cli.coordination.toolloop import ToolStep, json_tool_instructions, run_with_tools, tool_activity
from massgen_cli.coordination.voting_styles import novelty_instructions, too_like, voting_instructions
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
    waiting_for: str = ""
    """A peer at work whose answer the step's vote named before it existed: the agent waits for new
    answers instead of failing (the vote is refused, as MassGen refuses it, but nothing went wrong)."""


@dataclass(frozen=True)
class Task:
    """The question of an attempt, and what a rejected earlier attempt asks of this one."""

    question: str
    extra: str = ""


@dataclass(eq=False, repr=False)  # for its constructor: compared and shown by identity
class WorkflowStep:
    """Runs agents' coordination steps over one attempt's ``board``."""

    policy: CoordinationPolicy
    context: StepContext
    scope: AttemptScope
    board: Board
    task: Task

    async def run(self, agent: Agent) -> StepOutcome:
        """One step plus bounded re-asks when it ends without a valid decision; the outcome's version is
        the answer set the agent has seen (peers' answers injected on the way count as seen)."""
        board, cap = self.board, self.policy.max_steps_per_agent
        board.seen[agent.id], messages = board.version, await self._messages(agent)
        note, awaited = "no decision", ""
        for reask in range(self.policy.max_reasks + 1):
            if board.steps[agent.id] >= cap:
                return StepOutcome(None, board.seen[agent.id], f"step cap ({cap}) reached")
            step = await self._step(agent, messages, first=reask == 0)
            completion = step.completion
            self.context.replied(self.scope.step_at(agent, self.task.question), completion)
            parsed = parse_decision(completion) or self._answer_in(agent, completion)
            decision, problem = self._validate(agent, parsed)
            if decision is not None:
                transcript = [*step.exchange, *decision_transcript(completion, _receipt(decision))]
                used = tool_activity(step.exchange)
                return StepOutcome(decision, board.seen[agent.id], "", transcript, completion.reasoning, used)
            note, awaited = problem, self._named_peer_at_work(agent.id, parsed)
            reask_message: Message = {"role": "user", "content": problem}
            messages = [*messages, *step.exchange, assistant_echo(completion), reask_message]
        if awaited:
            return StepOutcome(None, board.seen[agent.id], note, waiting_for=awaited)
        return StepOutcome(None, board.seen[agent.id], f"no valid decision after re-asks: {note}")

    async def _step(self, agent: Agent, messages: list[Message], *, first: bool) -> ToolStep:
        """One backend step with its tools, watched at its tool-call boundaries (MassGen's hooks)."""
        self.board.steps[agent.id] += 1
        write_back = self.context.thread_writer(agent.id, system_prompts=1) if first else None
        watch = CoordinationWatch(self.board, agent.id, self.policy)
        try:
            async with asyncio.timeout(self.policy.timing.step_s):
                return await run_with_tools(
                    agent,
                    self._request(agent, messages),
                    self.scope.emit,
                    self.scope.log,
                    limit=self.policy.tool_calls_per_step,
                    decide_now=prompts.TOOL_LIMIT,
                    on_compressed=write_back,
                    recall=partial(self.context.recalled, self.scope.step_at(agent, self.task.question)),
                    watch=watch,
                )
        except asyncio.CancelledError:  # superseded by a peer's answer: not this agent's step to count
            self.board.steps[agent.id] -= 1
            raise

    def can_answer(self, agent_id: str) -> bool:
        """Under its own answer cap and the attempt's (``max_new_answers_global``)."""
        rules, board = self.policy.answers, self.board
        own, total = rules.per_agent, rules.total
        return (own is None or board.answer_counts[agent_id] < own) and (
            total is None or board.total_answers() < total
        )

    async def decided(self, agent: Agent, outcome: StepOutcome) -> None:
        """The extensions learn what the step decided: its transcript (with a new answer as text when it
        was not given as a ``new_answer`` call), reasoning and tool use."""
        messages = list(outcome.transcript)
        if isinstance(outcome.decision, NewAnswer) and not _calls(outcome.transcript, NEW_ANSWER):
            messages.append({"role": "assistant", "content": outcome.decision.content})
        at = self.scope.step_at(agent, self.task.question)
        await self.context.decided(StepDone(at, messages, outcome.reasoning, outcome.tools_used))

    def _validate(self, agent: Agent, decision: Decision | None) -> tuple[Decision | None, str]:
        """The decision if it stands (else None) and why not: the workflow's rules, then the extensions'."""
        valid, problem = self._checked(agent.id, decision)
        if valid is None:
            return None, problem
        answer = valid.content if isinstance(valid, NewAnswer) else None
        vetoed = self.context.veto(self.scope.step_at(agent, self.task.question), answer)
        return (None, vetoed) if vetoed else (valid, "")

    def _checked(self, agent_id: str, decision: Decision | None) -> tuple[Decision | None, str]:
        if decision is None:
            return None, prompts.REASK
        if isinstance(decision, NewAnswer):
            problem = self._answer_problem(agent_id, decision)
            return (None, problem) if problem else (decision, "")
        target = resolve_target(decision.target, self.board.order)
        choices = ", ".join(self.board.vote_aliases()) or "none yet"
        if target is None:
            return None, f"'{decision.target}' is not an agent here (choose from: {choices})."
        if target not in self.board.answers:  # MassGen refuses it too; its answer may be on the way
            return None, (
                f"'{decision.target}' has no answer yet: vote for an answer you can see ({choices}), or give "
                "your own with new_answer."
            )
        return VoteFor(target, decision.reason), ""

    def _answer_in(self, agent: Agent, completion: Completion) -> NewAnswer | None:
        """A reply that calls an extension's ``answer_tools`` (a client's tool): that call is its answer."""
        text = answering(self.context.extensions).answer_in(completion)
        return NewAnswer(text) if text is not None else None

    def _named_peer_at_work(self, agent_id: str, decision: Decision | None) -> str:
        """The peer a refused vote named that has no answer yet but may still give one, or ""."""
        if not isinstance(decision, VoteFor):
            return ""
        target, board = resolve_target(decision.target, self.board.order), self.board
        if target is None or target == agent_id or target in board.answers or target in board.resting:
            return ""
        return target

    def _answer_problem(self, agent_id: str, answer: NewAnswer) -> str:
        """Why a new answer is refused (an answer cap, MassGen's fairness cap or novelty), or ""."""
        rules, board = self.policy.answers, self.board
        if not self.can_answer(agent_id):
            return "You have reached your answer limit; vote for the best existing answer."
        if rules.fairness and not board.lead_allowed(agent_id, rules.lead_cap):
            return (
                "Fairness lead cap reached: you are ahead of your peers by "
                f"{rules.lead_cap} answer(s). Vote for the best answer, or wait for "
                "your peers to catch up."
            )
        others = [text for peer, text in board.answers.items() if peer != agent_id]
        if too_like(answer.content, others, rules.novelty):
            return (
                "Your answer is too like an existing one; give a substantially different answer, or vote "
                "for the best existing answer."
            )
        return ""

    async def _messages(self, agent: Agent) -> list[Message]:
        uses_json = not agent.backend.capabilities.tool_calls
        tool_text = json_tool_instructions(agent.toolbox.specs) if uses_json and agent.toolbox else ""
        at = self.scope.step_at(agent, self.task.question)
        notes = await self.context.task_notes(at)  # first: a note may refresh what a system note reads
        system = prompts.system_message(
            agent.config.system_message,
            *self._judging(agent),
            agent.toolbox.instructions(),
            tool_text,
            *await self.context.system_notes(at, with_peers=True),
            uses_json=uses_json,
            appended=agent.config.append_system_prompt,
        )
        extra = "\n\n".join(part for part in (self.task.extra, notes) if part)
        board = self.board
        task = prompts.task_message(self.task.question, board.answers, board.order, extra)
        return await self.context.messages(agent, at, system, self.scope.task(agent.id, task))

    def _judging(self, agent: Agent) -> tuple[str, str]:
        """How the agent judges answers (its voting style, else the orchestrator's) and how new an answer
        must be."""
        policy = self.policy
        style = agent.config.voting_sensitivity or policy.voting
        voting = voting_instructions(
            style,
            threshold=policy.voting_threshold,
            answer_cap=policy.answers.per_agent,
            step=self.board.steps[agent.id] + 1,
        )
        return voting, novelty_instructions(policy.answers.novelty)

    def _request(self, agent: Agent, messages: list[Message]) -> Request:
        can_answer, targets = self.can_answer(agent.id), self.board.vote_aliases()
        if agent.backend.capabilities.tool_calls:
            tools = workflow_tools(can_answer, targets) + self.context.workflow_tools(agent.id)
            tools += answering(self.context.extensions).tools if can_answer else ()
            return Request(messages, tools=tools, purpose="coordination")
        return Request(messages, response_schema=decision_schema(can_answer, targets), purpose="coordination")


def _calls(messages: list[Message], name: str) -> bool:
    """Whether an assistant message in ``messages`` calls the tool ``name``."""
    return any(call["function"]["name"] == name for m in messages for call in m.get("tool_calls") or ())


def _receipt(decision: Decision) -> str:
    return "Answer recorded." if isinstance(decision, NewAnswer) else f"Vote recorded for {decision.target}."

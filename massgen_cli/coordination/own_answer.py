"""An agent's own answer to the question, in one step (with its tools), seeing no other agent's answer.

A single agent answers this way, and so does every agent when ``orchestrator.decide_by`` is
``agreement``: then they answer at once, each on its own, and the answer the others agree with most
wins (``tally.pick_by_agreement``) — for small models whose votes are no better than chance.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from massgen_cli.agent.data import Agent, StepRefused
from massgen_cli.backends.base import Purpose, Request
from massgen_cli.coordination import prompts
from massgen_cli.coordination.call_answers import answering
from massgen_cli.coordination.extension import StepDone
from massgen_cli.coordination.likeness import likeness
from massgen_cli.coordination.orchestrator import AttemptResult
from massgen_cli.coordination.outcome import refused_end
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.tally import agreement_leaders, agreement_scores, pick_by_agreement
from massgen_cli.coordination.toolloop import (
    SINGLE_ANSWER_SCHEMA,
    json_answer,
    json_tool_instructions,
    run_with_tools,
)
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentStatus, Notice, RunEvent
from massgen_cli.messages import Message


@dataclass(frozen=True)
class AnswerStep:
    """Where an own-answer step runs (its attempt's scope) and how long it may take."""

    context: StepContext
    scope: AttemptScope
    tool_call_limit: int
    timeout_s: float

    def emit(self, event: RunEvent) -> None:
        self.scope.emit(event)


@dataclass
class OwnAnswer:
    agent_id: str
    text: str = ""
    exchange: list[Message] = field(default_factory=list)
    failure: str = ""
    timed_out: bool = False
    refused: str = ""
    """Why the agent's step was refused (``StepRefused``: a spent cap is one), its ``failure`` too."""


async def own_answer(
    agent: Agent, question: str, step: AnswerStep, *, purpose: Purpose = "answer"
) -> OwnAnswer:
    """``agent``'s answer: its own system prompt, the question, its memory and tools; its request's
    ``purpose`` is ``FINAL_ANSWER`` when the answer is the turn's final answer as it comes."""
    json_tools = bool(agent.toolbox) and not agent.backend.capabilities.tool_calls
    extra = (
        [json_tool_instructions(agent.toolbox.specs), prompts.SINGLE_JSON_INSTRUCTIONS] if json_tools else []
    )
    context, at = step.context, step.scope.step_at(agent, question)
    system = prompts.own_system_message(
        agent.config.system_message,
        agent.toolbox.instructions(),
        *extra,
        *await context.system_notes(at, with_peers=False),
        appended=agent.config.append_system_prompt,
    )
    task = step.scope.task(agent.id, {"role": "user", "content": question})
    messages = await context.messages(agent, at, system, task)
    schema = SINGLE_ANSWER_SCHEMA if json_tools else None
    calls = answering(context.extensions)
    offered = calls.tools if agent.backend.capabilities.tool_calls else ()
    request = Request(messages, tools=offered, response_schema=schema, purpose=purpose)
    write_back = context.thread_writer(agent.id, system_prompts=int(system is not None))
    try:
        async with asyncio.timeout(step.timeout_s):  # not wait_for: it can swallow a cancel at the step's end
            done = await run_with_tools(
                agent,
                request,
                step.emit,
                step.scope.log,
                limit=step.tool_call_limit,
                decide_now=prompts.ANSWER_NOW,
                on_compressed=write_back,
                recall=partial(context.recalled, at),
            )
    except StepRefused as error:
        step.emit(AgentStatus(agent.id, "done", str(error)))
        return OwnAnswer(agent.id, failure=str(error), refused=str(error))
    except BackendError as error:
        step.emit(AgentStatus(agent.id, "failed", str(error)))
        return OwnAnswer(agent.id, failure=f"{agent.id} failed: {error}")
    except TimeoutError:
        step.emit(AgentStatus(agent.id, "failed", f"timed out after {step.timeout_s:g}s"))
        return OwnAnswer(agent.id, failure=f"{agent.id} timed out after {step.timeout_s:g}s", timed_out=True)
    await context.decided(StepDone(at, done.exchange, done.completion.reasoning))
    text = json_answer(done.completion.text) if json_tools else done.completion.text.strip()
    text = calls.answer_in(done.completion) or text  # a call of a client's tool is the answer
    if not text:
        step.emit(AgentStatus(agent.id, "failed", "an empty answer"))
        return OwnAnswer(agent.id, exchange=done.exchange, failure=f"{agent.id} returned an empty answer")
    return OwnAnswer(agent.id, text, done.exchange)


async def answer_alone(agent: Agent, question: str, step: AnswerStep, *, purpose: Purpose) -> AttemptResult:
    """One agent needs no voting: its answer is the final answer (streamed as it comes when ``purpose`` is
    ``FINAL_ANSWER``, that is when no post-evaluation can reject it)."""
    started = time.monotonic()
    if agent.toolbox.roots is not None:
        agent.toolbox.roots.presenting = True  # one agent's answer is final: no one to disagree with
    answer = await own_answer(agent, question, step, purpose=purpose)
    if answer.failure:
        reason = refused_end(answer.refused, answered=False) if answer.refused else answer.failure
        transcripts = {agent.id: answer.exchange}
        return AttemptResult(
            {},
            [],
            None,
            reason,
            _since(started),
            transcripts,
            timed_out=answer.timed_out,
            halted=answer.refused,
        )
    answers, transcripts = {agent.id: answer.text}, {agent.id: answer.exchange}
    return AttemptResult(answers, [], agent.id, "single agent answered", _since(started), transcripts)


async def answer_by_agreement(agents: Sequence[Agent], question: str, step: AnswerStep) -> AttemptResult:
    """Every agent answers at once on its own; the answer the others agree with most wins."""
    started = time.monotonic()
    for agent in agents:
        step.emit(AgentStatus(agent.id, "working"))
    results = await asyncio.gather(*(own_answer(a, question, step) for a in agents))
    answers = {result.agent_id: result.text for result in results if not result.failure}
    for result in results:  # a failure was said as it happened
        if not result.failure:
            step.emit(AgentStatus(result.agent_id, "answered", result.text))
    order = [agent.id for agent in agents]
    tied = len(agreement_leaders(answers, order, question)) > 1
    like = await asyncio.to_thread(likeness, answers) if tied else None
    winner = pick_by_agreement(answers, order, question, like)
    transcripts = {result.agent_id: result.exchange for result in results}
    refused = next((result.refused for result in results if result.refused), "")
    if refused:
        reason = refused_end(refused, answered=winner is not None)
    elif winner is None:
        reason = "no agent produced an answer"
    else:
        scores = agreement_scores(answers, question)
        reason = f"chosen by agreement among {len(answers)} answer(s)" + (_tie_text(like) if tied else "")
        alike = f"; likeness to the others: {_scores_text(like, order)}" if like is not None else ""
        step.emit(Notice("debug", f"agreement scores: {_scores_text(scores, order)}{alike}"))
    return AttemptResult(answers, [], winner, reason, _since(started), transcripts, halted=refused)


def _tie_text(like: dict[str, float] | None) -> str:
    if like is None:
        return "; a tie, left to registration order (the offline embedder is not installed)"
    return "; a tie, broken by likeness to the other answers"


def _scores_text(scores: dict[str, float], order: Sequence[str]) -> str:
    return ", ".join(f"{agent_id} {scores[agent_id]:.2f}" for agent_id in order if agent_id in scores)


def _since(started: float) -> dict[str, float]:
    return {"coordination": round(time.monotonic() - started, 3)}

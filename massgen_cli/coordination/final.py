"""The end of an attempt: the final answer (the winner's presentation, or the winning answer as it is)
and its post-evaluation, in which the winner checks the final answer and may ask for a new attempt.

A presentation that no post-evaluation can reject is the turn's final answer as it comes: its request's
purpose is ``FINAL_ANSWER``, so its text streams to stdout. Once the run halts (its spending caps are
spent, say), neither the presentation nor the post-evaluation starts: the winning answer is final as it
is.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from massgen_cli.agent.data import FINAL_ANSWER, Agent, StepRefused
from massgen_cli.agent.pipeline import run_step
from massgen_cli.backends.base import Purpose, Request, ToolSpec
from massgen_cli.coordination import prompts
from massgen_cli.coordination.call_answers import answering
from massgen_cli.coordination.decisions import find_json_object
from massgen_cli.coordination.orchestrator import AttemptResult
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.toolloop import run_with_tools
from massgen_cli.errors import BackendError
from massgen_cli.events import Notice
from massgen_cli.tools.toolbox import Toolbox

SUBMIT, RESTART = "submit", "restart_orchestration"

EVALUATION_INSTRUCTIONS = """\
Check the final answer below against the original message. If it fully answers it, call `submit`. \
If it is wrong or incomplete, call `restart_orchestration` with the reason and instructions for the \
next attempt."""

EVALUATION_JSON_INSTRUCTIONS = (
    'Reply with one JSON object only: {"action": "submit"} or '
    '{"action": "restart_orchestration", "reason": "<why>", "instructions": "<what to do differently>"}.'
)

EVALUATION_TOOLS = (
    ToolSpec(SUBMIT, "Accept the final answer.", {"type": "object", "properties": {}}),
    ToolSpec(
        RESTART,
        "Reject the final answer and start a new attempt.",
        {
            "type": "object",
            "properties": {"reason": {"type": "string"}, "instructions": {"type": "string"}},
            "required": ["reason", "instructions"],
        },
    ),
)

EVALUATION_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": [SUBMIT, RESTART]},
        "reason": {"type": "string"},
        "instructions": {"type": "string"},
    },
    "required": ["action"],
}


@dataclass(frozen=True)
class Verdict:
    restart: bool
    reason: str = ""
    instructions: str = ""


@contextlib.contextmanager
def presenting(agent: Agent) -> Iterator[None]:
    """While the agent writes the final answer, its write context paths are writable."""
    roots = agent.toolbox.roots
    if roots is not None:
        roots.presenting = True
    try:
        yield
    finally:
        if roots is not None:
            roots.presenting = False


@dataclass(frozen=True)
class Finale:
    """The end of one attempt, run with the coordination policy, the steps' context and the attempt's
    scope (where its events and requests go)."""

    policy: CoordinationPolicy
    context: StepContext
    scope: AttemptScope

    async def final_answer(
        self, agents: Sequence[Agent], question: str, result: AttemptResult, purpose: Purpose
    ) -> str | None:
        """The winning answer as it is (one agent, or ``final_presentation: reuse``), else the winner's
        presentation of it, written with ``purpose``; None without a winner."""
        if result.winner is None:
            return None
        winning = result.answers[result.winner]
        winner = next(agent for agent in agents if agent.id == result.winner)
        as_it_is = answering(self.context.extensions).final_as_it_is(winning)  # a call of a client's tool
        if len(agents) == 1 or not self._presents(winner) or as_it_is:
            return winning
        if not result.halted and (halted := await self.scope.halt.reason()):
            _stopped(result, halted)
        if result.halted:
            return winning
        started = time.monotonic()
        presented = await self._present(winner, [agent.id for agent in agents], question, result, purpose)
        result.timings_s["presentation"] = round(time.monotonic() - started, 3)
        return presented or winning

    def _presents(self, winner: Agent) -> bool:
        """Whether the winner writes the final answer in a call of its own."""
        mode = self.policy.final_answer
        if mode == "reuse_unless_writing":  # as MassGen: context paths are written in the presentation
            roots = winner.toolbox.roots
            return roots is not None and any(root.final_only for root in roots.roots)
        return mode != "reuse"

    async def _present(
        self, winner: Agent, agent_ids: list[str], question: str, result: AttemptResult, purpose: Purpose
    ) -> str:
        """The winner writes the final answer, with its tools when its backend calls tools: this is when
        context paths with permission write may be written. A failure leaves the winning answer."""
        synthesis = self.policy.final_answer == "synthesize"
        answers, votes = result.answers, result.votes
        task = self.scope.task(
            winner.id, prompts.presentation_message(question, answers, votes, agent_ids, synthesis)
        )
        with_tools = bool(winner.toolbox) and winner.backend.capabilities.tool_calls
        system = prompts.own_system_message(
            winner.config.system_message,
            winner.toolbox.instructions() if with_tools else "",
            *(self.context.presentation_notes(winner.id) if with_tools else ()),
            appended=winner.config.append_system_prompt,
        )
        request = Request(self.context.plain(winner, system, task), purpose=purpose)
        timeout = self.policy.timing.step_s
        try:
            with presenting(winner):
                async with asyncio.timeout(timeout):
                    step = await run_with_tools(
                        winner if with_tools else replace(winner, toolbox=Toolbox()),
                        request,
                        self.scope.emit,
                        self.scope.log,
                        limit=self.policy.tool_calls_per_step,
                        decide_now=prompts.ANSWER_NOW,
                    )
        except StepRefused as error:  # spent during the presentation's own tool calls
            _stopped(result, str(error))
            return ""
        except (BackendError, TimeoutError) as error:
            problem = str(error) or f"no answer within {timeout:g}s"
            self.scope.emit(
                Notice("warning", f"presentation by {winner.id} failed ({problem}); using its answer as is")
            )
            return ""
        return step.completion.text.strip()

    async def restart_for(self, agents: Sequence[Agent], result: TurnResult) -> tuple[str, str] | None:
        """Post-evaluation of an attempt that has a final answer: the reason and instructions of a
        restart, or None."""
        answer = result.final_answer
        if result.winner is None or answer is None:
            return None
        if answering(self.context.extensions).final_as_it_is(answer):
            return None
        if await self.scope.halt.reason():
            return None
        winner = next(agent for agent in agents if agent.id == result.winner)
        verdict = await self.restart_asked(winner, result.question, answer)
        return (verdict.reason, verdict.instructions) if verdict.restart else None

    async def restart_asked(self, winner: Agent, question: str, final_answer: str) -> Verdict:
        """Post-evaluation by the winner; a failure (or a timeout) keeps the answer."""
        try:
            async with asyncio.timeout(self.policy.timing.step_s):
                return await self._evaluate(winner, question, final_answer)
        except (BackendError, TimeoutError) as error:
            problem = str(error) or "it timed out"
            self.scope.emit(Notice("warning", f"post-evaluation failed ({problem}); keeping the answer"))
            return Verdict(restart=False)
        except StepRefused:  # a request hook refused it since the turn looked: the answer stands as it is
            return Verdict(restart=False)

    async def _evaluate(self, agent: Agent, question: str, final_answer: str) -> Verdict:
        """Ask the winner whether the final answer stands; anything unclear counts as ``submit``."""
        uses_json = not agent.backend.capabilities.tool_calls
        body = (
            f"{EVALUATION_INSTRUCTIONS}\n\n<ORIGINAL MESSAGE>\n{question}\n</ORIGINAL MESSAGE>\n\n"
            f"<FINAL ANSWER>\n{final_answer}\n</FINAL ANSWER>"
        )
        content = body + (f"\n\n{EVALUATION_JSON_INSTRUCTIONS}" if uses_json else "")
        messages = [self.scope.task(agent.id, {"role": "user", "content": content})]
        request = (
            Request(messages, response_schema=EVALUATION_SCHEMA, purpose="post_evaluation")
            if uses_json
            else Request(messages, tools=EVALUATION_TOOLS, purpose="post_evaluation")
        )
        completion = await run_step(agent, request, self.scope.emit, self.scope.log)
        arguments = next((call.arguments for call in completion.tool_calls if call.name == RESTART), None)
        if arguments is None and not completion.tool_calls:
            payload = find_json_object(completion.text) or {}
            arguments = payload if payload.get("action") == RESTART else None
        if arguments is None:
            return Verdict(restart=False)
        return Verdict(True, str(arguments.get("reason", "")), str(arguments.get("instructions", "")))


def _stopped(result: AttemptResult, halted: str) -> None:
    """The attempt's end reason says that the run's halt (``halted`` says why) kept the winner from
    presenting."""
    result.halted = halted
    result.end_reason = f"{result.end_reason}; then {halted}: the winning answer is final as it is"


def final_purpose(may_restart: bool) -> Purpose:
    """The purpose of a request for the final answer: ``FINAL_ANSWER`` (it streams to stdout) unless a
    post-evaluation may still reject it."""
    return "presentation" if may_restart else FINAL_ANSWER

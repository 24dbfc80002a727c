"""One turn: attempts of coordination, the winner's presentation, optional post-evaluation, logs."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from massgen_cli.backends.base import Request
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.coordination import prompts
from massgen_cli.coordination.agents import Agent
from massgen_cli.coordination.orchestrator import AttemptResult, Orchestrator
from massgen_cli.coordination.outcome import WARNING_LEVELS, TurnResult, presenting
from massgen_cli.coordination.own_answer import AnswerStep, answer_alone, answer_by_agreement
from massgen_cli.coordination.postevaluation import post_evaluate
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.coordination.toolloop import run_with_tools
from massgen_cli.errors import BackendError
from massgen_cli.events import AgentStatus, FinalAnswer, Notice, RunEvent, ToolFinished, TurnEnded, Usage
from massgen_cli.logs import AttemptLog, RunLog
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.block import SharedMemory
from massgen_cli.memory.shared.parts import SharedParts
from massgen_cli.messages import Message
from massgen_cli.session import Session
from massgen_cli.text import one_line
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.snapshots import Snapshots
from massgen_cli.tools.toolbox import Toolbox


class TurnRunner:
    """Runs the turns of a session with a fixed set of agents."""

    def __init__(
        self,
        config: MassGenConfig,
        agents: Sequence[Agent],
        session: Session,
        threads: AgentThreads,
        run_log: RunLog,
        sink: Callable[[RunEvent], None],
        memory: MemoryRuntime | None = None,
        shared: SharedParts | None = None,
        mcp: McpHub | None = None,
        snapshots: Snapshots | None = None,
    ):
        self.config = config
        self.shared = shared or SharedParts(config.orchestrator.shared_memory)
        self.agents = list(agents)
        self.session = session
        self.threads = threads
        self.memory = memory
        self.run_log = run_log
        run_log.on_failure = self._unsaved
        self.sink = sink
        self.log: AttemptLog | None = None
        self.turn = session.next_turn
        self.transcripts: dict[str, list[Message]] = {}
        self.usage_at_start: dict[str, Usage] = {}
        self.attempt_usage_at_start: dict[str, Usage] = {}
        self.tool_calls: dict[str, Counter[str]] = {}
        self.agent_status: dict[str, dict[str, str]] = {}
        self.warnings: list[str] = []
        self.mcp = mcp
        self.snapshots = snapshots
        self.mcp_connected = False

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, AgentStatus) and event.status != "working":  # how each agent's attempt went
            self.agent_status[event.agent_id] = {
                "status": event.status,
                "detail": one_line(event.detail, 300),
            }
        if isinstance(event, Notice) and event.level in WARNING_LEVELS and event.message not in self.warnings:
            self.warnings.append(event.message)
        if isinstance(event, ToolFinished):
            counts = self.tool_calls.setdefault(event.agent_id, Counter())
            counts.update({"calls": 1, "failed": int(not event.ok)})
        self.sink(event)
        if self.log is not None:
            self.log.event(event, session_id=self.session.id, turn=self.turn)

    async def run(self, question: str) -> TurnResult:
        """Answer ``question`` as the session's next turn; the session records it if it got an answer."""
        await self._connect_mcp()
        turn, started = self.session.next_turn, time.monotonic()
        self._saving("the session", self.session.begin_turn)
        self.turn = turn
        self.usage_at_start = {agent.id: agent.usage for agent in self.agents}
        for agent in self.agents:
            if agent.guard is not None:
                agent.guard.begin_turn(turn)
        result = await self._attempts(question, turn)
        await self._finish_turn(question, turn, result, started)
        return result

    async def _connect_mcp(self) -> None:
        """Before the first turn: each agent's MCP servers start (once per run) and their tools join
        its toolbox."""
        if self.mcp is None or self.mcp_connected:
            return
        self.mcp_connected = True
        for agent in self.agents:
            backend = agent.config.backend
            if backend.mcp_servers:
                workspace = agent.toolbox.roots.base if agent.toolbox.roots is not None else Path.cwd()
                tools = await self.mcp.tools(
                    backend.mcp_servers, workspace, backend.allowed_tools, backend.exclude_tools
                )
                agent.toolbox.tools.update({tool.name: tool for tool in tools})

    async def _attempts(self, question: str, turn: int) -> TurnResult:
        """Attempts until one is accepted (or none may follow); the last attempt's log stays open."""
        max_attempts = self.config.orchestrator.coordination.max_orchestration_restarts + 1
        extra = ""
        for attempt in range(1, max_attempts + 1):
            self.log, result = self.run_log.attempt(turn, attempt), None
            self.warnings = []
            self.attempt_usage_at_start = {agent.id: agent.usage for agent in self.agents}
            self.shared.begin_attempt(turn, attempt)
            if self.snapshots is not None:
                self.snapshots.begin_attempt(turn, attempt)
            if self.memory is not None:
                self.memory.begin_attempt(turn, attempt, self.log.directory if self.log else None)
            try:
                result = await self._attempt(question, turn, attempt, extra)
                restart = await self._wants_restart(result, question, attempt < max_attempts)
            except BaseException:
                self._saving("shared memory", lambda: self.shared.cancel_turn(turn))
                if self.snapshots is not None:
                    self.snapshots.cancel_turn(turn)
                if self.memory is not None:
                    self.memory.cancel_turn()
                self._close_attempt(result)
                raise
            if restart is None:
                return result
            self.emit(Notice("warning", f"restarting coordination (attempt {attempt + 1}): {restart[0]}"))
            self._saving("shared memory", partial(self.shared.reject_attempt, turn, attempt))
            if self.snapshots is not None:
                self.snapshots.reject_attempt(turn, attempt)
            self._close_attempt(result)
            extra = f"A previous attempt was rejected: {restart[0]}\nInstructions: {restart[1]}"
        raise AssertionError("the last attempt never asks for a restart")

    async def _finish_turn(self, question: str, turn: int, result: TurnResult, started: float) -> None:
        """Shared entries, long-term memory, threads and the session learn the outcome; logs close."""
        votes = ", ".join(f"{v['voter']}→{v['target']}" for v in result.votes)
        self._saving(
            "shared memory",
            lambda: self.shared.finish_turn(turn, result.attempt, result.winner, result.final_answer, votes),
        )
        if self.memory is not None:
            result.memory_errors += await self.memory.end_turn(
                result.winner, result.final_answer, result.answers
            )
        result.timings_s["total"] = round(time.monotonic() - started, 3)
        await self._usage_settled()
        if result.final_answer is not None:
            await self._remember_turn(question, result.final_answer)
            spent = Usage.total(self._usage_events().values())
            complete = partial(
                self.session.complete_turn, turn, question, result.final_answer, result.winner, spent.fields()
            )
            self._saving("the session", complete)
        tally = Counter(vote["target"] for vote in result.votes)
        self.emit(TurnEnded(turn, result.end_reason, self._usage_events(), result.winner, dict(tally)))
        self._close_attempt(result)

    async def _remember_turn(self, question: str, final_answer: str) -> None:
        """Each agent's thread gets the question, its own decisive step and the final answer."""
        for agent in self.agents:
            await self.threads.append_message(agent.id, {"role": "user", "content": question})
            for message in self.transcripts.get(agent.id, []):
                await self.threads.append_message(agent.id, message)
            await self.threads.append_message(agent.id, {"role": "assistant", "content": final_answer})
        self._saving("the agents' threads", self.threads.save)

    def _saving(self, what: str, save: Callable[[], object]) -> None:
        """A save the disk refuses is said, and the turn goes on (it is tried again at the next save)."""
        try:
            save()
        except OSError as error:
            self._unsaved(f"{what} could not be saved: {error}")

    def _unsaved(self, message: str) -> None:
        self.emit(Notice("degraded", message))

    def _close_attempt(self, result: TurnResult | None) -> None:
        if self.log is not None:
            if result is not None:
                self.log.summary(result.to_dict())
            self.log.close()
        self.log = None

    async def _attempt(self, question: str, turn: int, attempt: int, extra: str) -> TurnResult:
        context = StepContext(self.threads, self.memory, self._shared_memory(), self.snapshots)
        self.tool_calls = {agent.id: Counter(calls=0, failed=0) for agent in self.agents if agent.toolbox}
        self.agent_status = {}
        settings = self.config.orchestrator
        step = AnswerStep(
            context, turn, self.emit, self.log, settings.max_tool_calls_per_step, self._single_call_timeout()
        )
        if len(self.agents) == 1:
            coordination = await answer_alone(self.agents[0], question, step)
        elif settings.decide_by == "agreement":
            coordination = await answer_by_agreement(self.agents, question, step)
        else:
            orchestrator = Orchestrator(
                self.agents,
                self.config.orchestrator,
                context=context,
                scope=AttemptScope(self.session.id, turn, attempt, self.emit, self.log),
                turn_timeout_s=self.config.timeout_settings.orchestrator_timeout_seconds,
            )
            coordination = await orchestrator.run(question, extra)
        self.transcripts = coordination.transcripts
        final = await self._final_answer(question, coordination, context)
        await self._usage_settled()
        spent = self._usage_events(self.attempt_usage_at_start)
        return TurnResult(
            session_id=self.session.id,
            turn=turn,
            attempt=attempt,
            question=question,
            answers=coordination.answers,
            votes=[{"voter": v.voter, "target": v.target, "reason": v.reason} for v in coordination.votes],
            winner=coordination.winner,
            final_answer=final,
            end_reason=coordination.end_reason,
            usage={agent_id: used.fields() for agent_id, used in spent.items()},
            total_usage=Usage.total(spent.values()).fields(),
            turn_usage=Usage.total(self._usage_events().values()).fields(),
            timings_s=coordination.timings_s,
            memory_errors=context.shared.take_errors(),
            tool_calls={agent_id: dict(counts) for agent_id, counts in self.tool_calls.items()},
            output_folder=self._output_folder(coordination.winner),
            agent_status=dict(self.agent_status),
            warnings=list(self.warnings),
        )

    def _output_folder(self, winner: str | None) -> str | None:
        """The winner's workspace is the turn's output folder; it is named at the end of the turn."""
        agent = next((agent for agent in self.agents if agent.id == winner), None)
        if agent is None or agent.workspace is None:
            return None
        self.emit(Notice("info", f"Output folder: {agent.workspace} (the workspace of {agent.id})"))
        return str(agent.workspace)

    def _shared_memory(self) -> SharedMemory:
        """The shared memory of one attempt, over the session's shared parts."""
        if self.memory is None:
            return self.shared.attempt_memory(self.session, self.emit, None, None)
        memory = self.memory
        return self.shared.attempt_memory(
            self.session, self.emit, memory.recorder, memory.dump_dir, memory.spool
        )

    async def _final_answer(self, question: str, result: AttemptResult, context: StepContext) -> str | None:
        if result.winner is None:
            return None
        winning = result.answers[result.winner]
        if len(self.agents) == 1 or self.config.orchestrator.final_presentation == "reuse":
            if len(self.agents) > 1:
                self.emit(FinalAnswer(result.winner, winning))
            return winning
        started = time.monotonic()
        presented = await self._present(question, result, context)
        result.timings_s["presentation"] = self._since(started)["coordination"]
        final = presented or winning
        self.emit(FinalAnswer(result.winner, final))
        return final

    async def _present(self, question: str, result: AttemptResult, context: StepContext) -> str:
        """The winner writes the final answer, with its tools when its backend calls tools: this is when
        context paths with permission write may be written."""
        winner = next(agent for agent in self.agents if agent.id == result.winner)
        agent_ids = [agent.id for agent in self.agents]
        task = prompts.presentation_message(question, result.answers, result.votes, agent_ids)
        with_tools = bool(winner.toolbox) and winner.backend.capabilities.tool_calls
        system = prompts.own_system_message(
            winner.config.system_message, winner.toolbox.instructions() if with_tools else ""
        )
        request = Request(context.plain(winner, system, task), purpose="presentation")
        try:
            with presenting(winner):
                step = await asyncio.wait_for(
                    run_with_tools(
                        winner if with_tools else replace(winner, toolbox=Toolbox()),
                        request,
                        self.emit,
                        self.log,
                        limit=self.config.orchestrator.max_tool_calls_per_step,
                        decide_now=prompts.ANSWER_NOW,
                        text_kind="content" if with_tools else "presentation",
                    ),
                    self.config.orchestrator.step_timeout_seconds,
                )
        except (BackendError, TimeoutError) as error:
            problem = str(error) or f"no answer within {self.config.orchestrator.step_timeout_seconds:g}s"
            self.emit(
                Notice("warning", f"presentation by {winner.id} failed ({problem}); using its answer as is")
            )
            return ""
        return step.completion.text.strip()

    async def _wants_restart(
        self, result: TurnResult, question: str, may_restart: bool
    ) -> tuple[str, str] | None:
        if not may_restart or result.winner is None or result.final_answer is None:
            return None
        winner = next(agent for agent in self.agents if agent.id == result.winner)
        try:
            verdict = await asyncio.wait_for(
                post_evaluate(winner, question, result.final_answer, self.emit, self.log),
                self.config.orchestrator.step_timeout_seconds,
            )
        except (BackendError, TimeoutError) as error:
            problem = str(error) or "it timed out"
            self.emit(Notice("warning", f"post-evaluation failed ({problem}); keeping the answer"))
            return None
        return (verdict.reason, verdict.instructions) if verdict.restart else None

    def _single_call_timeout(self) -> float:
        return min(
            self.config.orchestrator.step_timeout_seconds,
            self.config.timeout_settings.orchestrator_timeout_seconds,
        )

    async def _usage_settled(self) -> None:
        await asyncio.gather(*(agent.settled() for agent in self.agents))

    def _usage_events(self, since: dict[str, Usage] | None = None) -> dict[str, Usage]:
        """What each agent spent in this turn, or since ``since`` (the agents' counters run for the whole
        process)."""
        start = self.usage_at_start if since is None else since
        return {agent.id: agent.usage.since(start.get(agent.id, Usage(0, 0))) for agent in self.agents}

    @staticmethod
    def _since(started: float) -> dict[str, float]:
        return {"coordination": round(time.monotonic() - started, 3)}

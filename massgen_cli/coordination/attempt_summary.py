"""An attempt summed up as a ``TurnResult`` (its ``summary.json``): what coordination and the final answer
gave, with the ledger's usage, tool calls, statuses and warnings. An attempt that ended by an exception (a
cancel, a signal, a failure) is summed up from what is known of it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from massgen_cli.agent.data import Agent
from massgen_cli.attempts import AttemptAt
from massgen_cli.coordination.ledger import Ledger
from massgen_cli.coordination.orchestrator import AttemptResult
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.events import Notice, RunEvent, Usage


@dataclass(frozen=True)
class AttemptSummary:
    """Sums up the attempts of one session's turns (see the module docstring)."""

    session_id: str
    agents: Sequence[Agent]
    ledger: Ledger
    emit: Callable[[RunEvent], None]

    def of(self, question: str, at: AttemptAt, coordination: AttemptResult, final: str | None) -> TurnResult:
        ledger = self.ledger
        spent = ledger.attempt_usage()
        return TurnResult(
            session_id=self.session_id,
            turn=at.turn,
            attempt=at.attempt,
            question=question,
            answers=coordination.answers,
            votes=list(coordination.votes),
            winner=coordination.winner,
            final_answer=final,
            end_reason=coordination.end_reason,
            usage=spent,
            timings_s=_with_waits(coordination.timings_s, ledger.attempt.rate_limit_wait_s),
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
            timed_out=coordination.timed_out,
        )

    def unfinished(self, question: str, at: AttemptAt, error: BaseException) -> TurnResult:
        """What is known of an attempt that ended by ``error``: how it ended, each agent's status, the
        warnings, tool calls and usage so far."""
        if isinstance(error, KeyboardInterrupt | asyncio.CancelledError):
            reason = "cancelled (interrupted or terminated)"
        else:
            reason = f"failed: {type(error).__name__}: {error}"
        return self.of(question, at, AttemptResult({}, [], None, reason), None)

    def _output_folder(self, winner: str | None) -> str | None:
        """The winner's workspace is the turn's output folder; it is named at the end of the turn."""
        agent = next((agent for agent in self.agents if agent.id == winner), None)
        if agent is None or agent.workspace is None:
            return None
        self.emit(Notice("info", f"Output folder: {agent.workspace} (the workspace of {agent.id})"))
        return str(agent.workspace)


def _with_waits(timings_s: dict[str, float], waited: float) -> dict[str, float]:
    """``timings_s`` with ``rate_limit_wait``, the seconds requests waited for rate limits, when any did."""
    return {**timings_s, "rate_limit_wait": round(waited, 3)} if waited else timings_s

"""A run's events as a client of the API sees them: the final answer is the content; the agents' work
(what they stream, their answers, votes, restarts, tool calls, warnings, how the turn ended) is the
reasoning, each piece headed by who said it. (What is sent is redacted of secrets where it is sent.)"""

from __future__ import annotations

from dataclasses import dataclass, field

from massgen_cli.events import (
    AgentStatus,
    AgentText,
    FinalAnswer,
    Notice,
    RunEvent,
    ToolFinished,
    TurnEnded,
    VoteCast,
)
from massgen_cli.text import one_line

SHOWN_NOTICES = ("warning", "degraded", "error")
"""The notices a client reads (info and debug lines are the console's, and may name local paths)."""
SUMMARY_CHARS = 200


@dataclass(frozen=True)
class Said:
    """What one event adds: to the reasoning, to the content, or both (empty when nothing)."""

    reasoning: str = ""
    content: str = ""


@dataclass
class Transcript:
    """Turns events into ``Said`` pieces, and keeps what it said: the reasoning so far, and the final
    answer's text as streamed, so the ``FinalAnswer`` adds only what the stream did not carry."""

    reasoning: list[str] = field(default_factory=list)
    streamed: str = ""
    speaker: str | None = None
    line_open: bool = False

    def hear(self, event: RunEvent) -> Said:
        said = self._said(event)
        if said.reasoning:
            self.reasoning.append(said.reasoning)
            self.line_open = not said.reasoning.endswith("\n")
        self.streamed += said.content
        return said

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning).strip()

    def _said(self, event: RunEvent) -> Said:
        if isinstance(event, AgentText):
            if event.kind == "presentation":
                return Said(content=event.text)
            return Said(self._heading(event.agent_id) + event.text)
        if isinstance(event, FinalAnswer):
            return Said(content=self._rest_of_answer(event.text))
        line = _line(event)
        if not line:
            return Said()
        self.speaker = None  # a line of its own: the next streamed text is headed again
        return Said(f"{self._new_line()}{line}\n")

    def _heading(self, agent_id: str) -> str:
        if agent_id == self.speaker:
            return ""
        self.speaker = agent_id
        return f"{self._new_line()}[{agent_id}] "

    def _new_line(self) -> str:
        return "\n" if self.line_open else ""

    def _rest_of_answer(self, final: str) -> str:
        """What ``final`` adds to the streamed answer: nothing when it is what streamed, its end when the
        stream was its start, and the whole answer after a blank line when a presentation broke off and
        the winning answer stands instead."""
        streamed = self.streamed
        if final.strip() == streamed.strip():
            return ""
        if final.startswith(streamed):
            return final[len(streamed) :]
        return f"\n\n{final}" if streamed else final


def _line(event: RunEvent) -> str:
    """The one line an event other than text says, or "" for an event a client need not read."""
    if isinstance(event, AgentStatus):
        return _status(event)
    if isinstance(event, VoteCast):
        return f"[{event.voter}] votes for {event.target}" + (f": {event.reason}" if event.reason else "")
    if isinstance(event, ToolFinished):
        mark = "ok" if event.ok else "failed"
        return f"[{event.agent_id}] tool {event.name} {mark}: {one_line(event.summary, SUMMARY_CHARS)}"
    if isinstance(event, Notice) and event.level in SHOWN_NOTICES:
        return f"[massgen] {event.level}: {event.message}"
    if isinstance(event, TurnEnded):
        winner = f"; winner {event.winner}" if event.winner else ""
        return f"[massgen] turn {event.turn} ended: {event.reason}{winner}"
    return ""


def _status(event: AgentStatus) -> str:
    if event.status == "answered":
        return f"[{event.agent_id}] new answer: {event.detail}"
    if event.status in ("restarted", "failed"):
        return f"[{event.agent_id}] {event.status}" + (f": {event.detail}" if event.detail else "")
    return ""

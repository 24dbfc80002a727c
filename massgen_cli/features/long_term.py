"""Long-term memory in a step: the ``Relevant memories:`` block (looked up again after a compression or
an agent restart), and what each decision records. It is also the attempt part that keeps a turn's
winner and learns values when the turn ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.coordination.extension import BlockMarker, StepAt, StepDone, StepExtension
from massgen_cli.memory.longterm.retrieve.retrieval import HEADER
from massgen_cli.memory.runtime.recall import Recall
from massgen_cli.memory.runtime.recording import Recording
from massgen_cli.messages import Message


class LongTermMemory(StepExtension):
    """Recall before each step, recording after each decision (see the module docstring)."""

    name: ClassVar[str] = "long-term memory"
    part_name: ClassVar[str] = "long-term memory"
    markers: ClassVar[tuple[BlockMarker, ...]] = (BlockMarker(HEADER),)

    def __init__(self, recall: Recall, recording: Recording):
        self.lookup = recall
        self.recording = recording
        self.asked: set[str] = set()
        """Agents whose question is recorded in this attempt (once each)."""

    def begin(self, at: AttemptAt) -> None:
        self.recording.begin(at)
        self.lookup.begin()
        self.asked.clear()

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        return await self.recording.commit(outcome)

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        self.recording.roll_back(at, whole_turn=whole_turn)

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        block = await self.lookup.block(at.agent_id, at.question, list(history))
        return [block] if block is not None else []

    async def recall(self, at: StepAt, messages: Sequence[Message]) -> Sequence[Message] | None:
        if not self.lookup.run.enabled_for(at.agent_id):
            return None
        self.lookup.refresh(at.agent_id, "after_compression")
        return await self.blocks(at, messages)

    async def decided(self, done: StepDone) -> None:
        """The question (once an attempt), the step's messages and the model's reasoning are recorded."""
        agent_id, messages = done.at.agent_id, list(done.messages)
        if agent_id not in self.asked:
            self.asked.add(agent_id)
            messages.insert(0, {"role": "user", "content": done.at.asked})
        self.recording.record(agent_id, messages, reasoning=done.reasoning)

    def restarted(self, agent_id: str, *, compressed: bool = False) -> None:
        self.lookup.refresh(agent_id, "after_compression" if compressed else "after_restart")

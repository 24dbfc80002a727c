"""Long-term memory in a step: the ``Relevant memories:`` block (looked up again after a compression or
an agent restart), and what each decision records. It is also the attempt part that keeps a turn's
winner and learns values when the turn ends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.blocks import RELEVANT_MEMORIES
from massgen_cli.config.schema import long_term_wanted
from massgen_cli.coordination.extension import BlockMarker, StepAt, StepDone, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.memory.runtime.opening import LongTermRun
    from massgen_cli.memory.runtime.recall import Recall
    from massgen_cli.memory.runtime.recording import Recording


class LongTermMemory(StepExtension):
    """Recall before each step, recording after each decision (see the module docstring)."""

    name: ClassVar[str] = "long-term memory"
    part_name: ClassVar[str] = "long-term memory"
    markers: ClassVar[tuple[BlockMarker, ...]] = (BlockMarker(RELEVANT_MEMORIES),)

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


def _open(opening: Opening) -> Opened:
    """The store opens now, so a problem shows before the first turn; what a compression drops from an
    agent whose long-term memory is on is written, and its next lookup is due. Offers the run and this
    extension (``LongTermOpened``) to the features that need them."""
    from massgen_cli.memory.runtime.opening import LongTermRun
    from massgen_cli.memory.runtime.recall import Recall
    from massgen_cli.memory.runtime.recording import Recording

    config, place = opening.config, opening.place
    run = LongTermRun(config, place.kept_in, place.session.id, opening.emit, place.session.refiled)
    recall, recording = Recall(run), Recording(run)
    extension = LongTermMemory(recall, recording)
    keepers = {
        agent_id: recording.dropped_listener(agent_id, _lookup_due(recall, agent_id))
        for agent_id in config.agent_ids
        if run.enabled_for(agent_id)
    }
    opened = LongTermOpened(run, extension)
    return Opened(extension, extension, provides=opened, keepers=keepers, close=_closing(run))


def _closing(run: LongTermRun) -> Callable[[], Awaitable[None]]:
    """The run's long-term memory closed, then the store clients this process shares."""

    async def close() -> None:
        from massgen_cli.memory.longterm.store.vector_stores import close_clients

        try:
            await run.close()
        finally:
            close_clients()

    return close


def _lookup_due(recall: Recall, agent_id: str) -> Callable[[], None]:
    """After what a compression dropped is written, the agent's next lookup is due."""
    return lambda: recall.refresh(agent_id, "after_compression")


class LongTermOpened:
    """What long-term memory offers the features that need it: the run (store, spool, recorder) and the
    step extension (its lookup and recording)."""

    def __init__(self, run: LongTermRun, extension: LongTermMemory):
        self.run = run
        self.extension = extension


FEATURE = Feature(
    "long-term memory",
    wanted=lambda opening: long_term_wanted(opening.config),
    open=_open,
    steps_after=("shared memory",),
    commits_after=("shared memory", "memory files"),
)
"""Memory files commit before long-term memory, whose commit writes what they recorded."""

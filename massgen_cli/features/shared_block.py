"""The orchestrator's shared memory in a step (``orchestrator.shared_memory``): the shared block before
each step, the ``share_memory`` tool beside the workflow tools (when entries are on), and what it records:
every new answer, every vote, and the tool work behind a decision (``SharedMemory`` is the attempt part)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.attempts import Vote
from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.blocks import SHARED_BLOCKS
from massgen_cli.coordination.extension import BlockMarker, StepAt, StepDone, StepExtension
from massgen_cli.events import Notice
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.memory.shared.entries import Scope
    from massgen_cli.memory.shared.memory import SharedMemory

SHARE_MEMORY = "share_memory"
SHARE_TOOL = ToolSpec(
    SHARE_MEMORY,
    "Share a note with the other agents: a finding, a plan, a constraint. Type 'slot:<name>' sets a "
    "session slot. Scope 'round' lasts this turn, 'conversation' the whole session. Still end your step "
    "with new_answer or vote.",
    {
        "type": "object",
        "properties": {
            "type": {"type": "string", "description": "What kind of note, e.g. plan, finding, slot:city."},
            "content": {"type": "string"},
            "scope": {"type": "string", "enum": ["round", "conversation"]},
        },
        "required": ["type", "content", "scope"],
    },
)


class SharedBlock(StepExtension):
    name: ClassVar[str] = "shared memory"
    markers: ClassVar[tuple[BlockMarker, ...]] = tuple(BlockMarker(header) for header in SHARED_BLOCKS)

    def __init__(self, shared: SharedMemory):
        self.shared = shared

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        block = await self.shared.block(at.agent_id, at.turn, at.question)
        return [block] if block is not None else []

    def workflow_tools(self, agent_id: str) -> Sequence[ToolSpec]:
        return (SHARE_TOOL,) if self.shared.entries is not None else ()

    def replied(self, at: StepAt, completion: Completion) -> None:
        """Scoped entries the agent wrote with ``share_memory`` in this reply."""
        entries = self.shared.entries
        for call in completion.tool_calls:
            if call.name != SHARE_MEMORY or entries is None:
                continue
            kind = str(call.arguments.get("type", "")).strip()
            content = str(call.arguments.get("content", ""))
            scope: Scope = "conversation" if call.arguments.get("scope") == "conversation" else "round"
            if kind and content:
                entries.add(kind, content, scope, at.agent_id, at.turn, at.attempt)
                self.shared.emit(Notice("info", f"[{at.agent_id}] shared {kind} ({scope})"))

    async def decided(self, done: StepDone) -> None:
        """Peers see what work backs a decision."""
        if done.tools_used:
            await self._record(done.at, done.tools_used)

    async def answered(self, at: StepAt, content: str) -> None:
        await self._record(at, content)

    async def voted(self, at: StepAt, vote: Vote) -> None:
        await self._record(at, f"Voted for {vote.target}: {vote.reason}")

    async def _record(self, at: StepAt, content: str) -> None:
        await self.shared.record(at.agent_id, content, at.turn, at.attempt)


def _open(opening: Opening) -> Opened:
    """The shared memory, recording into long-term memory when that is on (opened first)."""
    from massgen_cli.memory.shared.memory import RecordingLink, SharedMemoryPlace, open_shared_memory

    place, long_term = opening.place, opening.provided("long-term memory")
    run = long_term.run if long_term is not None else None
    link = RecordingLink(run.recorder, run.spool) if run is not None else RecordingLink()
    store = run.store if run is not None else None
    shared_place = SharedMemoryPlace(place.session, store, link, place.kept_in is not None)
    shared = open_shared_memory(opening.config, shared_place, opening.emit)
    return Opened(SharedBlock(shared), shared, provides=shared)


def _wanted(opening: Opening) -> bool:
    settings = opening.config.orchestrator.shared_memory
    return bool(settings.conversation or settings.persistent or settings.entries)


FEATURE = Feature(
    "shared memory",
    wanted=_wanted,
    open=_open,
    needs=("long-term memory",),
    steps_after=("task plans",),
)

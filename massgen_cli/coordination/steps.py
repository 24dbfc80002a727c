"""Step assembly, one path for every agent step: its system prompt, its thread, the task, and the
extensions' context blocks right after the system prompt; a compression of the request is written back
to the agent's thread (without the blocks) so it is not redone. What the extensions do around a step is
walked here, in their order, so the rest of the turn calls one method for each moment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from massgen_cli.agent.data import Agent
from massgen_cli.attachments import Attachment
from massgen_cli.attempts import Vote
from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.coordination.call_answers import answering
from massgen_cli.coordination.extension import BlockMarker, StepAt, StepDone, StepExtension
from massgen_cli.events import RunEvent
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.messages import Message, recordable, with_attachments
from massgen_cli.runlogs.writer import AttemptLog

Emit = Callable[[RunEvent], None]
CompressedListener = Callable[[list[Message]], Awaitable[None]]


def _ignore(event: RunEvent) -> None:
    """The event sink of an attempt nobody watches."""


class Halt(Protocol):
    """Why the run may start no new step, for a reason the turn does not know (the spending caps, which
    the composition root opens, are one): ``reached`` says it now, ``reason`` once every call that ended
    is counted; "" while steps may start."""

    def reached(self) -> str: ...

    async def reason(self) -> str: ...


class NoHalt:
    """Nothing halts the run."""

    def reached(self) -> str:
        return ""

    async def reason(self) -> str:
        return ""


@dataclass(frozen=True)
class AttemptScope:
    """Where an attempt runs: its session, turn and attempt, where its events go, its log folder, what
    may halt the run (no step starts once it gives a reason), and the images and files each agent's
    question carries."""

    session_id: str = ""
    turn: int = 1
    attempt: int = 1
    emit: Emit = _ignore
    log: AttemptLog | None = None
    halt: Halt = field(default_factory=NoHalt)
    attachments: Mapping[str, tuple[Attachment, ...]] = field(default_factory=dict)

    def step_at(self, agent: Agent, question: str) -> StepAt:
        attached = tuple(attachment.placeholder for attachment in self.attachments.get(agent.id, ()))
        return StepAt(agent.id, question, self.turn, self.attempt, agent.workspace, attached)

    def task(self, agent_id: str, message: Message) -> Message:
        """A step's task (the user message with the question) with what the agent's question carries."""
        return with_attachments(message, self.attachments.get(agent_id, ()))


@dataclass(frozen=True)
class StepContext:
    """What the steps of an attempt draw on: the agents' threads and the extensions that are on."""

    threads: AgentThreads = field(default_factory=AgentThreads)
    extensions: tuple[StepExtension, ...] = ()

    @property
    def markers(self) -> tuple[BlockMarker, ...]:
        return tuple(marker for extension in self.extensions for marker in extension.markers)

    async def system_notes(self, at: StepAt, *, with_peers: bool) -> list[str]:
        """The extensions' sections of the agent's system prompt."""
        return [await extension.system_note(at, with_peers=with_peers) for extension in self.extensions]

    async def task_notes(self, at: StepAt) -> str:
        """The extensions' lines for a coordination step's task."""
        notes = [await extension.task_note(at) for extension in self.extensions]
        return "\n\n".join(note for note in notes if note)

    def plain(self, agent: Agent, system: Message | None, task: Message) -> list[Message]:
        """The system prompt, the agent's thread and the task, without context blocks."""
        return _in_order(system, agent.history(self.threads), task)

    async def messages(
        self, agent: Agent, at: StepAt, system: Message | None, task: Message
    ) -> list[Message]:
        """``plain`` with the extensions' context blocks after the system prompt."""
        history = agent.history(self.threads)
        blocks = [block for extension in self.extensions for block in await extension.blocks(at, history)]
        after = answering(self.extensions).after_task()
        return [*_after_system(_in_order(system, history, task), blocks), *after]

    async def recalled(self, at: StepAt, messages: list[Message]) -> list[Message]:
        """``messages`` (a request compressed inside a step) with the blocks the extensions make again."""
        for extension in self.extensions:
            fresh = await extension.recall(at, messages)
            if fresh is None:
                continue
            kept = [m for m in messages if not any(marker.marks(m) for marker in extension.markers)]
            messages = _after_system(kept, list(fresh))
        return messages

    def thread_writer(self, agent_id: str, system_prompts: int) -> CompressedListener:
        """Keeps a compression of a step's request (``system_prompts`` leading system messages, then the
        thread, then the task) as the agent's thread; the extensions hear of it."""

        async def write_back(messages: list[Message]) -> None:
            for extension in self.extensions:
                extension.restarted(agent_id, compressed=True)
            history = compressed_history(messages, system_prompts, self.markers)
            await self.threads.replace_history(agent_id, history)

        return write_back

    def workflow_tools(self, agent_id: str) -> tuple[ToolSpec, ...]:
        return tuple(tool for extension in self.extensions for tool in extension.workflow_tools(agent_id))

    def replied(self, at: StepAt, completion: Completion) -> None:
        for extension in self.extensions:
            extension.replied(at, completion)

    def veto(self, at: StepAt, answer: str | None) -> str:
        """The first extension's reason against the decision, or ""."""
        return next((reason for e in self.extensions if (reason := e.veto(at, answer))), "")

    async def decided(self, done: StepDone) -> None:
        for extension in self.extensions:
            await extension.decided(done)

    async def answered(self, at: StepAt, content: str) -> None:
        for extension in self.extensions:
            await extension.answered(at, content)

    async def voted(self, at: StepAt, vote: Vote) -> None:
        for extension in self.extensions:
            await extension.voted(at, vote)

    def restarted(self, agent_id: str) -> None:
        for extension in self.extensions:
            extension.restarted(agent_id)

    def presentation_notes(self, agent_id: str) -> list[str]:
        return [extension.presentation_note(agent_id) for extension in self.extensions]


def compressed_history(
    messages: list[Message], system_prompts: int, markers: Sequence[BlockMarker]
) -> list[Message]:
    """The thread part of a compressed request: without the leading system prompts, the task (the last
    user message) and what follows it, and the context blocks (they are made again for every request)."""
    task = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages) - 1)
    kept = messages[system_prompts:task]
    return [recordable(m) for m in kept if not any(marker.marks(m) for marker in markers)]


def _after_system(messages: list[Message], blocks: list[Message]) -> list[Message]:
    """``messages`` with ``blocks``, in order, right after the first system message (first if none)."""
    position = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "system"), 0)
    return [*messages[:position], *blocks, *messages[position:]]


def _in_order(system: Message | None, history: list[Message], task: Message) -> list[Message]:
    return [*([system] if system is not None else []), *history, task]

"""Step assembly, one path for every agent step: its system prompt, its thread, the task, and the memory
blocks (retrieved long-term memories and the shared block) right after the system prompt; a compression
of the request is written back to the agent's thread so it is not redone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from massgen_cli.config.schema import SharedMemoryConfig
from massgen_cli.coordination.agents import Agent
from massgen_cli.events import RunEvent
from massgen_cli.logs import AttemptLog
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.memory.longterm.retrieval import is_memory_message
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.block import SharedMemory
from massgen_cli.memory.shared.injection import compressed_history, with_blocks
from massgen_cli.messages import Message, inject_after_first_system

Emit = Callable[[RunEvent], None]
CompressedListener = Callable[[list[Message]], Awaitable[None]]


def _ignore(event: RunEvent) -> None:
    """The event sink of an attempt nobody watches."""


@dataclass(frozen=True)
class AttemptScope:
    """Where an attempt runs: its session, turn and attempt, where its events go and its log folder."""

    session_id: str = ""
    turn: int = 1
    attempt: int = 1
    emit: Emit = _ignore
    log: AttemptLog | None = None


@dataclass
class StepContext:
    """What the steps of an attempt draw on: the agents' threads, long-term memory and shared memory
    (any of them empty)."""

    threads: AgentThreads = field(default_factory=AgentThreads)
    memory: MemoryRuntime | None = None
    shared: SharedMemory = field(default_factory=lambda: SharedMemory(SharedMemoryConfig()))

    def plain(self, agent: Agent, system: Message | None, task: Message) -> list[Message]:
        """The system prompt, the agent's thread and the task, without memory blocks."""
        return _in_order(system, agent.history(self.threads), task)

    async def messages(
        self, agent: Agent, turn: int, question: str, system: Message | None, task: Message
    ) -> list[Message]:
        """``plain`` with the retrieved memories and the shared block after the system prompt."""
        history = agent.history(self.threads)
        retrieved = None
        if self.memory is not None:
            retrieved = await self.memory.retrieved_block(agent.id, question, history)
        shared = await self.shared.block(agent.id, turn, question)
        return with_blocks(_in_order(system, history, task), retrieved, shared)

    async def recalled(self, agent: Agent, question: str, messages: list[Message]) -> list[Message]:
        """``messages`` (a request compressed inside a step) with its retrieved memories looked up again,
        so what compression dropped can come back."""
        if self.memory is None:
            return messages
        self.memory.refresh(agent.id)
        block = await self.memory.retrieved_block(agent.id, question, messages)
        kept = [message for message in messages if not is_memory_message(message)]
        return inject_after_first_system(kept, block) if block is not None else kept

    def thread_writer(self, agent_id: str, system_prompts: int) -> CompressedListener:
        """Keeps a compression of a step's request (``system_prompts`` leading system messages, then the
        thread, then the task) as the agent's thread; long-term memory is looked up again after it."""

        async def write_back(messages: list[Message]) -> None:
            if self.memory is not None:
                self.memory.refresh(agent_id)
            await self.threads.replace_history(agent_id, compressed_history(messages, system_prompts))

        return write_back


def _in_order(system: Message | None, history: list[Message], task: Message) -> list[Message]:
    return [*([system] if system is not None else []), *history, task]

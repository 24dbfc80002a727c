"""Step assembly, one path for every agent step: its system prompt, its thread, the task, and the blocks
(retrieved long-term memories, the shared block, the task plans) right after the system prompt; a
compression of the request is written back to the agent's thread so it is not redone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from massgen_cli.config.orchestrator import SharedMemoryConfig
from massgen_cli.coordination.agents import Agent
from massgen_cli.events import RunEvent
from massgen_cli.memory.context.threads import AgentThreads
from massgen_cli.memory.filesystem import MemoryFiles
from massgen_cli.memory.longterm.retrieve.retrieval import is_memory_message
from massgen_cli.memory.runtime import MemoryRuntime
from massgen_cli.memory.shared.injection import compressed_history, with_blocks
from massgen_cli.memory.shared.memory import SharedMemory
from massgen_cli.messages import Message, inject_after_first_system
from massgen_cli.runlogs.writer import AttemptLog
from massgen_cli.tools.planning import PlanBook
from massgen_cli.tools.snapshots import Snapshots

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
    (any of them empty), peers' snapshots, task plans and memory files (when they are on)."""

    threads: AgentThreads = field(default_factory=AgentThreads)
    memory: MemoryRuntime | None = None
    shared: SharedMemory = field(default_factory=lambda: SharedMemory(SharedMemoryConfig()))
    snapshots: Snapshots | None = None
    plans: PlanBook | None = None
    memory_files: MemoryFiles | None = None

    async def peers_note(self, agent: Agent) -> str:
        """The agent's view of its peers' snapshots, rebuilt; the line that tells it where they are."""
        if self.snapshots is None:
            return ""
        labels = await asyncio.to_thread(self.snapshots.refresh_view, agent.id)
        folder = self.snapshots.view_folder(agent.id)
        if not labels:
            return f"Your peers' workspaces will appear under {folder} (read-only) once they answer."
        listed = ", ".join(f"{folder / label}" for label in labels)
        return f"Your peers' workspaces as of their latest answers (read-only, by their labels): {listed}"

    async def snapshot(self, agent: Agent) -> None:
        """Keep the agent's workspace as it is now, for its peers (after a new answer)."""
        if self.snapshots is not None and agent.workspace is not None:
            await asyncio.to_thread(self.snapshots.take, agent.id, agent.workspace)

    async def memory_files_note(self, agent: Agent, *, peers: bool = True) -> str:
        """What the agent's system prompt says of its memory files (and, with ``peers``, of its peers' as
        of their latest answers: call ``peers_note`` first) before a step; "" when the mode is off."""
        if self.memory_files is None:
            return ""
        view = self.snapshots.view_folder(agent.id) if self.snapshots is not None and peers else None
        return await asyncio.to_thread(self.memory_files.section, agent.id, view)

    async def memory_files_written(self, agent_id: str) -> None:
        """After a step that decided: the agent's changed memory files go to long-term memory."""
        if self.memory_files is not None:
            await self.memory_files.index(agent_id)

    def plain(self, agent: Agent, system: Message | None, task: Message) -> list[Message]:
        """The system prompt, the agent's thread and the task, without memory blocks."""
        return _in_order(system, agent.history(self.threads), task)

    async def messages(
        self, agent: Agent, turn: int, question: str, system: Message | None, task: Message
    ) -> list[Message]:
        """``plain`` with the retrieved memories, the shared block and the task plans after the system
        prompt."""
        history = agent.history(self.threads)
        retrieved = None
        if self.memory is not None:
            retrieved = await self.memory.retrieved_block(agent.id, question, history)
        shared = await self.shared.block(agent.id, turn, question)
        plans = self.plans.block(agent.id) if self.plans is not None else None
        return with_blocks(_in_order(system, history, task), retrieved, shared, plans)

    async def recalled(self, agent: Agent, question: str, messages: list[Message]) -> list[Message]:
        """``messages`` (a request compressed inside a step) with its retrieved memories looked up again,
        so what compression dropped can come back."""
        if self.memory is None:
            return messages
        self.memory.refresh(agent.id, "after_compression")
        block = await self.memory.retrieved_block(agent.id, question, messages)
        kept = [message for message in messages if not is_memory_message(message)]
        return inject_after_first_system(kept, block) if block is not None else kept

    def thread_writer(self, agent_id: str, system_prompts: int) -> CompressedListener:
        """Keeps a compression of a step's request (``system_prompts`` leading system messages, then the
        thread, then the task) as the agent's thread; long-term memory is looked up again after it."""

        async def write_back(messages: list[Message]) -> None:
            if self.memory is not None:
                self.memory.refresh(agent_id, "after_compression")
            await self.threads.replace_history(agent_id, compressed_history(messages, system_prompts))

        return write_back


def _in_order(system: Message | None, history: list[Message], task: Message) -> list[Message]:
    return [*([system] if system is not None else []), *history, task]

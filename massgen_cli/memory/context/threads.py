"""Per-agent threads: each agent's own conversation across turns, persisted with the session."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from massgen_cli.attachments import noted
from massgen_cli.memory.context.conversation import ConversationMemory
from massgen_cli.messages import Message
from massgen_cli.state import read_json, write_json

THREADS_FILE = "threads.json"


class AgentThreads:
    """One ConversationMemory per agent; ``save``/``load`` keep them in the session folder."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self.threads: dict[str, ConversationMemory] = {}

    def thread(self, agent_id: str) -> ConversationMemory:
        return self.threads.setdefault(agent_id, ConversationMemory())

    async def append_message(self, agent_id: str, message: Message) -> str:
        """Append a message as given (``tool_calls``, ``tool_call_id``, ``name`` kept); returns its id."""
        return await self.thread(agent_id).add(message, agent_id=agent_id)

    def get_history(self, agent_id: str) -> list[Message]:
        return self.thread(agent_id).messages_now()

    async def remember_turn(
        self,
        question: str,
        steps: dict[str, list[Message]],
        final_answer: str,
        agent_ids: list[str],
        attached: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Each agent's thread gets the question (with the placeholders of what it was sent with it,
        ``attached``), its own decisive ``steps`` and the final answer."""
        for agent_id in agent_ids:
            asked = noted(question, list((attached or {}).get(agent_id, ())))
            await self.append_message(agent_id, {"role": "user", "content": asked})
            for message in steps.get(agent_id, []):
                await self.append_message(agent_id, message)
            await self.append_message(agent_id, {"role": "assistant", "content": final_answer})

    async def replace_history(self, agent_id: str, messages: list[Message]) -> None:
        await self.thread(agent_id).replace(messages, agent_id=agent_id)

    async def clear_history(self, agent_id: str | None = None) -> None:
        """Forget one agent's thread, or every thread."""
        targets = [agent_id] if agent_id is not None else list(self.threads)
        for target in targets:
            await self.thread(target).clear()

    def save(self) -> None:
        if self.path is None:
            return
        write_json(self.path, {agent_id: thread.to_list() for agent_id, thread in self.threads.items()})

    @classmethod
    def load(cls, session_dir: Path, *, saved: bool = True) -> AgentThreads:
        """The threads saved in ``session_dir`` (empty when there are none yet); with ``saved`` False they
        are read but never written (the state folder cannot be written)."""
        path = session_dir / THREADS_FILE
        threads = cls(path if saved else None)
        if path.is_file():
            data = read_json(path, "agent threads")
            threads.threads = {
                agent_id: ConversationMemory.from_list(items) for agent_id, items in data.items()
            }
        return threads

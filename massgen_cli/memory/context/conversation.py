"""ConversationMemory: an ordered, async-safe store of chat messages with ids, timestamps and authors.

Messages keep their full structure (``tool_calls``, ``tool_call_id``, ``name``); the bookkeeping
fields live beside the message, so ``messages_now`` gives back exactly what was added.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from massgen_cli.messages import Message


@dataclass(frozen=True)
class StoredMessage:
    """A message with its id, when it was added and which agent it belongs to."""

    id: str
    message: Message
    timestamp: str
    agent_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields, the message not copied

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoredMessage:
        return cls(data["id"], data["message"], data["timestamp"], data.get("agent_id"))


@dataclass
class ConversationMemory:
    """Ordered messages. Reads return copies, so callers cannot change what is stored."""

    items: list[StoredMessage] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = asyncio.Lock()

    async def add(self, message: Message, *, agent_id: str | None = None) -> str:
        """Append one message; returns its id."""
        async with self._lock:
            return self.add_now(message, agent_id=agent_id)

    def add_now(self, message: Message, *, agent_id: str | None = None) -> str:
        """``add`` for callers outside the event loop (loading, tests)."""
        stored = StoredMessage(
            uuid.uuid4().hex, copy.deepcopy(message), datetime.now(UTC).isoformat(), agent_id
        )
        self.items.append(stored)
        return stored.id

    def messages_now(self, *, agent_id: str | None = None, limit: int | None = None) -> list[Message]:
        """Messages in order, as copies (optionally only one agent's, optionally the last ``limit``)."""
        chosen = [item for item in self.items if agent_id is None or item.agent_id == agent_id]
        if limit is not None:
            chosen = chosen[-limit:] if limit > 0 else []
        return [copy.deepcopy(item.message) for item in chosen]

    async def replace(self, messages: list[Message], *, agent_id: str | None = None) -> None:
        """Replace the whole content (after compression)."""
        async with self._lock:
            self.items.clear()
            for message in messages:
                self.add_now(message, agent_id=agent_id)

    def truncate(self, size: int) -> None:
        """Keep only the first ``size`` messages (what came after is rolled back)."""
        del self.items[size:]

    async def clear(self) -> None:
        async with self._lock:
            self.items.clear()

    def size(self) -> int:
        return len(self.items)

    def to_list(self) -> list[dict[str, Any]]:
        return [item.to_dict() for item in self.items]

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> ConversationMemory:
        return cls([StoredMessage.from_dict(item) for item in data])

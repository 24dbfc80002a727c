"""Context blocks put into a request (retrieved memories, the shared block) and taken out again
when a compressed request is written back to an agent's thread."""

from __future__ import annotations

from massgen_cli.memory.longterm.retrieve.retrieval import is_memory_message
from massgen_cli.memory.shared.block import is_shared_block
from massgen_cli.messages import Message, inject_after_first_system
from massgen_cli.tools.planning import is_plans_block


def with_blocks(messages: list[Message], *blocks: Message | None) -> list[Message]:
    """``messages`` with each block after the first system message; the last block given ends up first."""
    for block in blocks:
        if block is not None:
            messages = inject_after_first_system(messages, block)
    return messages


def compressed_history(messages: list[Message], system_prompts: int) -> list[Message]:
    """The thread part of a compressed request: without the leading system prompts, the final user
    message, and the injected blocks (they are rebuilt for every request)."""
    kept = messages[system_prompts:-1]
    return [m for m in kept if not is_memory_message(m) and not is_shared_block(m) and not is_plans_block(m)]

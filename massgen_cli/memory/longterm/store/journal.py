"""The write journal between the vector store and the index: a write to the vector store is journalled in
the index first and its points carry the journal's token, so a process that dies between the two writes
leaves something the next open can find and finish.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from massgen_cli.memory.longterm.store.index.contract import StoreIndex

NAMESPACE = "massgen"
WRITE_TOKEN = "massgen_write"


def begin_write(index: StoreIndex) -> str:
    """Journal a write to the vector store; its points carry the token returned, so ``reconcile`` can
    find them if the process dies before the index has them. ``index.finish(token)`` closes it."""
    token = uuid.uuid4().hex
    index.begin(token)
    return token


@contextlib.contextmanager
def journalled_write(index: StoreIndex, memory: Callable[[], Any]) -> Iterator[str]:
    """A write to the vector store and the index as one: journalled (``begin_write``) with the token
    given, closed when the block ends, and undone when it fails (``undo_write`` on ``memory()``)."""
    token = begin_write(index)
    try:
        yield token
    except BaseException:
        undo_write(index, memory, token)
        raise
    index.finish(token)


def reconcile(index: StoreIndex, memory: Any) -> None:
    """Finish what a process that died left half-done in mem0's ``memory``: points of a write the index
    never got are removed, and a delete goes through."""
    for token, kind in index.pending():
        if kind == "delete":
            with contextlib.suppress(Exception):
                memory.delete(token)
        else:
            discard_unindexed(index, memory, token)
        index.finish(token)


def discard_unindexed(index: StoreIndex, memory: Any, token: str) -> None:
    """Remove the points of write ``token`` that the index does not hold (a page at a time, until a page
    holds none: a batch may have written thousands)."""
    while True:
        written = memory.get_all(filters={"user_id": NAMESPACE, WRITE_TOKEN: token}, top_k=1000)
        orphans = [item["id"] for item in written.get("results", []) if not index.has(item["id"])]
        removed = 0
        for memory_id in orphans:
            with contextlib.suppress(ValueError):  # another process finishing the same write took it first
                memory.delete(memory_id)
                removed += 1
        if not removed:  # none left (or none that can go: the next open tries again)
            return


def undo_write(index: StoreIndex, memory: Callable[[], Any], token: str) -> None:
    """A write that failed in this process undone at once: its points the index does not hold are
    removed from ``memory()`` and the journal entry closed. When that cannot be done now (the server is
    gone, mem0 cannot be built), the entry stays for the next open's ``reconcile``."""
    with contextlib.suppress(Exception):
        discard_unindexed(index, memory(), token)
        index.finish(token)

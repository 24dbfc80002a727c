"""The write journal between the vector store and the index: a write to the vector store is journalled in
the index first and its points carry the journal's token, so a process that dies between the two writes
leaves something the next open can find and finish.
"""

from __future__ import annotations

import contextlib
import uuid
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


def reconcile(index: StoreIndex, memory: Any) -> None:
    """Finish what a process that died left half-done in mem0's ``memory``: points of a write the index
    never got are removed, and a delete goes through."""
    for token, kind in index.pending():
        if kind == "delete":
            with contextlib.suppress(Exception):
                memory.delete(token)
        else:
            written = memory.get_all(filters={"user_id": NAMESPACE, WRITE_TOKEN: token}, top_k=1000)
            for item in written.get("results", []):
                if not index.has(item["id"]):
                    memory.delete(item["id"])
        index.finish(token)

"""Moving a state folder's local index into a server store (PostgreSQL, or a Qdrant server), once: a
folder that kept sources, values, stale marks and winners beside a server's table or collection (as
earlier versions did) uploads them, so nothing is lost when the server becomes the whole truth. Known
content (the same key) gains the local sources; a value, a mark or a winner the server already has
stays."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from massgen_cli.memory.longterm.record.memories import Source
from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.export import ExportedMemory, fields_of

UPLOADED_MARK = "uploaded_to"


class UploadTarget(Protocol):
    """What a server index offers an upload (``server.ServerIndex``, ``qdrant.QdrantIndex``)."""

    def identity(self) -> str: ...
    def add(
        self, memory_id: str, key: str, text: str, fields: dict[str, Any], source: Source, vector: Any = None
    ) -> None: ...
    def id_for_key(self, key: str) -> str | None: ...
    def add_source(self, memory_id: str, source: Source) -> bool: ...
    def adopt_rows(self, kind: str, rows: list[tuple[object, ...]]) -> int: ...


@dataclass
class Migration:
    """What one upload moved."""

    memories: int = 0
    known: int = 0
    sources: int = 0
    values: int = 0
    winners: int = 0
    stale: int = 0

    def describe(self) -> str:
        return (
            f"moved {self.memories} memories ({self.known} the server knew already), {self.sources} sources, "
            f"{self.values} learned values, {self.winners} winners and {self.stale} stale marks"
        )


def local_index_path(state_dir: Path) -> Path:
    return state_dir / "memory" / "index.db"


def migrate(state_dir: Path, server: UploadTarget, *, again: bool = False) -> Migration | None:
    """Upload the state folder's local index to ``server`` unless it was uploaded there before (or
    ``again``); None when there is nothing to upload."""
    path = local_index_path(state_dir)
    if not path.is_file():
        return None
    local = MemoryIndex(path)
    try:
        target = server.identity()
        if local.count() == 0 or (local.meta(UPLOADED_MARK) == target and not again):
            return None
        moved = _upload(local, server)
        local.set_meta(UPLOADED_MARK, target)
        return moved
    finally:
        local.close()


def _upload(local: MemoryIndex, server: UploadTarget) -> Migration:
    moved = Migration()
    ids: dict[str, str] = {}
    for exported in local.exported():
        placed = _placed(server, exported)
        if placed is None:
            continue
        server_id, others, new = placed
        ids[exported.memory.id] = server_id
        moved.memories, moved.known = moved.memories + new, moved.known + (not new)
        moved.sources += sum(server.add_source(server_id, source) for source in others)
    moved.values = server.adopt_rows("values", _mapped(local.exported_rows("memory_values"), ids))
    moved.winners = server.adopt_rows("winners", local.exported_rows("winners"))
    moved.stale = server.adopt_rows("stale", _mapped(local.exported_rows("stale"), ids))
    return moved


def _placed(server: UploadTarget, exported: ExportedMemory) -> tuple[str, list[Source], bool] | None:
    """Where a local memory lands: its id on the server, its sources still to add there, and whether it
    is new there; None for a memory without any source that the server does not know. The server is
    asked first, as a Qdrant server takes a memory's own id again without a word."""
    memory = exported.memory
    if server.id_for_key(memory.key) is None and memory.sources:
        first, *others = memory.sources
        try:
            server.add(memory.id, memory.key, memory.text, fields_of(exported), first, exported.vector)
            return memory.id, others, True
        except KeyTaken:  # another process stored the same content meanwhile
            pass
    known = server.id_for_key(memory.key)
    return (known, list(memory.sources), False) if known is not None else None


def _mapped(rows: list[tuple[object, ...]], ids: dict[str, str]) -> list[tuple[object, ...]]:
    """Rows whose first column is a local memory id, with the server's id of that memory."""
    return [(ids[str(row[0])], *row[1:]) for row in rows if str(row[0]) in ids]

"""Moving a state folder's local index into a server store, once: a folder that kept sources, values,
stale marks and winners beside a server table (as earlier versions did) uploads them, so nothing is
lost when the server becomes the whole truth. Known content (the same key) gains the local sources;
a value, a mark or a winner the server already has stays."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from massgen_cli.memory.longterm.store.index import MemoryIndex
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.export import fields_of
from massgen_cli.memory.longterm.store.server.index import ServerIndex

UPLOADED_MARK = "uploaded_to"


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


def migrate(state_dir: Path, server: ServerIndex, *, again: bool = False) -> Migration | None:
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


def _upload(local: MemoryIndex, server: ServerIndex) -> Migration:
    moved = Migration()
    ids: dict[str, str] = {}
    for exported in local.exported():
        memory = exported.memory
        try:
            first, *others = memory.sources
            server.add(memory.id, memory.key, memory.text, fields_of(exported), first, exported.vector)
            moved.memories += 1
            ids[memory.id] = memory.id
        except (KeyTaken, ValueError):  # known content, or a memory without any source
            known = server.id_for_key(memory.key)
            if known is None:
                continue
            moved.known += 1
            ids[memory.id] = known
            others = list(memory.sources)
        moved.sources += sum(server.add_source(ids[memory.id], source) for source in others)
    moved.values = server.adopt_rows("values", _mapped(local.exported_rows("memory_values"), ids))
    moved.winners = server.adopt_rows("winners", local.exported_rows("winners"))
    moved.stale = server.adopt_rows("stale", _mapped(local.exported_rows("stale"), ids))
    return moved


def _mapped(rows: list[tuple[object, ...]], ids: dict[str, str]) -> list[tuple[object, ...]]:
    """Rows whose first column is a local memory id, with the server's id of that memory."""
    return [(ids[str(row[0])], *row[1:]) for row in rows if str(row[0]) in ids]

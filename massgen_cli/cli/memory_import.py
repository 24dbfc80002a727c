"""``massgen memory import``: a JSONL conversation or knowledge base into long-term memory, one line per
record, read a line at a time; importing the same file twice adds nothing and embeds nothing."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress

from massgen_cli.cli.memory_commands import open_store
from massgen_cli.errors import MassGenError, UsageError

if TYPE_CHECKING:
    from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage, RecordOutcome
    from massgen_cli.memory.longterm.store.bulk_writing import Items

IMPORT_BATCH = 512
"""Lines written at once, at most."""
IMPORT_BATCH_WINDOWS = 256
"""Stored chunks a batch makes, at most (one is embedded while the one before is written): a file of
long lines is held and embedded a bounded number of chunks at a time, never a whole batch of lines at
once (50 lines of 1 MB made 47,000 chunks held as vectors together)."""
IMPORT_BATCH_CHARACTERS = 64_000
"""Text a batch holds, at most (512 turns of a conversation hold about 46,000 characters): what a batch
costs while it is embedded and written grows with its text, and a 2 MB file of long lines peaked at
302 MB in batches of 256 chunks (about 360,000 characters), 251 MB in batches of 64."""
IMPORT_PIECE_WINDOWS = 64
"""Chunks of a long line's piece, at most (a piece is about 90,000 characters of long text)."""
IMPORTER = "import"
"""Who recorded an imported line that names no agent (it wins turn 0 of the line's session)."""


def import_file(
    path: Path, config: str | None, state_dir: Path | None, *, session: str | None, agent: str | None
) -> int:
    """Load a JSONL conversation or knowledge base; importing the same file twice adds nothing. The
    importer wins turn 0 of each session it records in, so every agent of the session sees those lines.
    The file is checked whole first (a bad line imports nothing), then read a batch at a time."""
    from massgen_cli.memory.longterm.store.importing import Importer

    lines = sum(1 for _ in _read_jsonl(path))
    tally = ImportTally()
    batches = _batches(_read_jsonl(path), session, agent, tally)
    with open_store(config, state_dir) as store:
        with Progress(console=Console(stderr=True), transient=True) as bar, Importer(store) as importer:
            task = bar.add_task(f"importing {path.name}", total=lines)
            # Only what the store does not hold yet is embedded; each batch is written at once.
            for _batch, outcomes in importer.write(batches):
                tally.add(outcomes)
                bar.advance(task, tally.lines_in_batches.popleft())
        for session_id in tally.importer_sessions:
            store.record_winner(session_id, 0, IMPORTER)
    console = Console(stderr=True)
    console.print(f"imported {lines} records: {tally.added} new memories, {tally.existing} already known")
    if tally.unseen:
        console.print(_unseen_notice(tally.unseen))
    return 0


class ImportTally:
    """What an import did: memories new and known, the sessions where the importer recorded turn 0
    (it wins that turn), and how many lines it recorded in a later turn (which no agent sees)."""

    def __init__(self) -> None:
        self.added = self.existing = self.unseen = 0
        self.importer_sessions: set[str] = set()
        self.lines_in_batches: deque[int] = deque()
        """The lines each batch read ends, in order (a long line's pieces may span batches)."""

    def read(self, context: RecordContext) -> None:
        if context.agent_id == IMPORTER:
            if context.turn == 0:
                self.importer_sessions.add(context.session_id)
            else:
                self.unseen += 1

    def add(self, outcomes: list[RecordOutcome]) -> None:
        for outcome in outcomes:
            self.added += len(outcome.added)
            self.existing += len(outcome.existing)


def _batches(
    records: Iterator[dict[str, Any]], session: str | None, agent: str | None, tally: ImportTally
) -> Iterator[Items]:
    """The records as batches to write: at most ``IMPORT_BATCH`` lines and about
    ``IMPORT_BATCH_WINDOWS`` chunks or ``IMPORT_BATCH_CHARACTERS`` of text each, a long line split into
    pieces of ``IMPORT_PIECE_WINDOWS`` chunks that make the same chunks (each piece keeps its line's
    fields)."""
    from massgen_cli.memory.longterm.record.memories import chunk_count, text_pieces

    batch: Items = []
    windows = characters = ended = 0
    for item in records:
        context = import_context(item, session, agent)
        tally.read(context)
        message = import_message(item)
        for piece in text_pieces(message["content"], min(IMPORT_PIECE_WINDOWS, IMPORT_BATCH_WINDOWS)):
            full = windows >= IMPORT_BATCH_WINDOWS or characters >= IMPORT_BATCH_CHARACTERS
            if batch and (full or len(batch) >= IMPORT_BATCH):
                tally.lines_in_batches.append(ended)
                yield batch
                batch, windows, characters, ended = [], 0, 0, 0
            batch.append(({**message, "content": piece}, context))
            windows += chunk_count(piece)
            characters += len(piece)
        ended += 1
    if batch:
        tally.lines_in_batches.append(ended)
        yield batch


def _unseen_notice(count: int) -> str:
    return (
        f"{count} record(s) of a turn after 0 are the importer's ('{IMPORTER}'), which no agent of the "
        "session sees: give --agent ID (or an 'agent_id' on each line) to make them that agent's, or leave "
        "out 'turn' so every agent of the session sees them"
    )


_KNOWN_FIELDS = ("content", "role", "agent_id", "turn", "session_id")


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The file's records one line at a time (whatever its size, about one line is held)."""
    if not path.is_file():
        raise UsageError(f"file '{path}' not found")
    number = 0
    with path.open(encoding="utf-8", newline="\n") as lines:
        try:
            for number, line in enumerate(lines, start=1):
                record = _record(path.name, number, line)
                if record is not None:
                    yield record
        except UnicodeDecodeError as error:  # text is decoded a block at a time, ahead of the lines
            raise MassGenError(f"{path.name}: after line {number}: not UTF-8 text ({error.reason})") from None


def _record(name: str, number: int, line: str) -> dict[str, Any] | None:
    """Line ``number`` as a record (None for a blank line), or a ``MassGenError`` saying what is wrong."""
    if not line.strip():
        return None
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise MassGenError(f"{name}: line {number}: not valid JSON ({error.msg})") from error
    if not isinstance(item, dict) or not str(item.get("content") or "").strip():
        raise MassGenError(f"{name}: line {number}: needs a JSON object with a non-empty 'content'")
    turn = item.get("turn")
    if turn is not None and not _whole_number(turn):
        raise MassGenError(f"{name}: line {number}: 'turn' must be a whole number, not {turn!r}")
    return dict(_without_lone_surrogates(item))


def _whole_number(value: Any) -> bool:
    if isinstance(value, str):
        return value.isdigit()
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate (valid in JSON's \\u escapes, not in UTF-8) as U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item) for key, item in value.items()}
    return value


def import_message(item: dict[str, Any]) -> RecordMessage:
    """An imported line as a record: its role and content, every other field kept as its metadata."""
    role = str(item["role"]) if item.get("role") in ("user", "assistant") else "user"
    metadata = {key: value for key, value in item.items() if key not in _KNOWN_FIELDS}
    return {"role": role, "content": str(item["content"]), "metadata": metadata}


def import_context(item: dict[str, Any], session: str | None, agent: str | None) -> RecordContext:
    """Who an imported line is recorded by (the importer when neither the line nor ``--agent`` names an
    agent), and where."""
    from massgen_cli.memory.longterm.record.memories import RecordContext

    return RecordContext(
        agent_id=str(item.get("agent_id") or agent or IMPORTER),
        session_id=str(session or item.get("session_id") or "import"),
        turn=int(item.get("turn") or 0),
        level="semantic",
    )

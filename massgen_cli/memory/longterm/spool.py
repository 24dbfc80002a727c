"""The spool: records that could not be written (the store would not open, or a write kept failing),
kept as JSON lines under the state folder until a run that can writes them. Nothing is silently lost."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from massgen_cli.memory.longterm.records import RecordContext, RecordMessage


class Spool:
    """``<state>/memory/spool.jsonl``: one ``{"messages", "context"}`` object per line."""

    def __init__(self, path: Path):
        self.path = path

    def keep(self, messages: list[RecordMessage], context: RecordContext) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"messages": messages, "context": asdict(context)}, ensure_ascii=False)
        with self.path.open("a", encoding="utf-8") as spool:
            spool.write(line + "\n")

    def take(self) -> list[tuple[list[RecordMessage], RecordContext]]:
        """Every kept record, oldest first; the file is emptied (what fails again is kept again). A line
        that cannot be read stays in ``<spool>.damaged`` rather than vanish."""
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        self.path.unlink()
        taken, damaged = [], []
        for line in filter(None, lines):
            try:
                item: dict[str, Any] = json.loads(line)
                taken.append((list(item["messages"]), RecordContext(**item["context"])))
            except (ValueError, KeyError, TypeError):
                damaged.append(line)
        if damaged:
            with self.path.with_suffix(".damaged").open("a", encoding="utf-8") as kept:
                kept.write("\n".join(damaged) + "\n")
        return taken

"""What an agent is told of its memory files before every step, as part of its system prompt: how to
keep them, its short-term files in full (within ``SHORT_TERM_BYTES``, the cut said), its long-term files
by path and description, and its peers' memory files as of their latest answers (when workspace
snapshots are on). Nothing here reads a file; ``folder`` does, and says what it left out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.memory.filesystem.folder import MEMORY, MemoryFile, TierRead
from massgen_cli.text import one_line

SHORT_TERM_BYTES = 16_000
"""The most bytes of an agent's own short-term files shown before a step."""
PEERS_SHORT_TERM_BYTES = 8_000
"""The most bytes of all its peers' short-term files shown before a step."""
HEAD_BYTES = 2_000
"""What is read of a long-term file to describe it."""
DESCRIPTION_CHARS = 160
HEADER = "## Memory files"

INSTRUCTIONS = f"""\
{HEADER}
You keep your memory as Markdown files in your workspace, written with the file tools:
- `memory/short_term/<name>.md`: small notes you need at every step (what the user prefers, key \
findings, decisions and why, the state of your work). They are shown to you below, in full, before \
every step (up to {SHORT_TERM_BYTES:,} bytes in all), so keep them short.
- `memory/long_term/<name>.md`: longer notes useful now and then (detailed analyses, lessons, what \
worked and what failed). They are listed below by path and description; read one with `read_file` \
when you need it.
Start each file with front matter that names and describes it:
---
name: <name>
description: <what it holds, in one line>
---
Update a file rather than writing a new one on the same subject. At the end of a turn every agent's \
memory files are merged into the winner's workspace and given to every agent for the next turn."""

INDEXED = "Your memory files are also indexed into long-term memory, where retrieval and search find them."

CONSOLIDATION = """\
## Memory files
Before you give the final answer, tidy your memory files for the next turns: keep in \
`memory/short_term/` the short notes worth seeing at every step and in `memory/long_term/` the \
detailed ones (each with its front matter: name, description); remove what is stale or repeated. \
After this answer your peers' memory files are merged into yours."""


@dataclass(frozen=True)
class PeerMemory:
    """A peer's memory files as of its latest answer: its label, where its copy lies, what was read."""

    label: str
    folder: Path
    short_term: TierRead
    long_term: TierRead


@dataclass
class _Budget:
    left: int
    cut: list[str] = field(default_factory=list)

    def take(self, label: str, file: MemoryFile) -> str:
        """The file's text within what is left, or "" when nothing is left; a cut is noted."""
        data = file.text.strip().encode("utf-8")
        if file.complete and len(data) <= self.left:
            self.left -= len(data)
            return data.decode("utf-8")
        if self.left == 0:
            self.cut.append(f"{label} ({file.size:,} bytes)")
            return ""
        shown = data[: self.left].decode("utf-8", errors="ignore")
        self.left = 0
        self.cut.append(f"{label} ({file.size - len(shown.encode('utf-8')):,} of {file.size:,} bytes)")
        return shown

    def note(self) -> list[str]:
        if not self.cut:
            return []
        return [
            "[Cut: short-term memories are shown up to their byte limit; not shown: "
            f"{', '.join(self.cut)}. Read them with read_file, and keep short-term memories short.]"
        ]


Labelled = Sequence[tuple[str, MemoryFile]]
"""Files with the path they are shown under."""


def memory_section(
    short_term: TierRead, long_term: TierRead, peers: Sequence[PeerMemory] = (), *, indexed: bool = False
) -> str:
    """The system prompt's part on memory files (see the module docstring)."""
    parts = [INSTRUCTIONS + (f"\n{INDEXED}" if indexed else "")]
    own_budget = _Budget(SHORT_TERM_BYTES)
    shown = _short_term([(file.path, file) for file in short_term.files], own_budget)
    parts.append("\n".join(["### Your short-term memories", *shown, *own_budget.note()]))
    listed = _long_term([(file.path, file) for file in long_term.files])
    parts.append("\n".join(["### Your long-term memories", *listed]))
    skipped = [*short_term.skipped, *long_term.skipped]
    if skipped:
        lines = [f"- {one_line(reason, 300)}" for reason in skipped]
        parts.append("\n".join(["### Memory files not used", *lines]))
    if peers:
        parts.append(_peers(peers))
    return "\n\n".join(parts)


def _short_term(files: Labelled, budget: _Budget, heading: str = "####") -> list[str]:
    lines = []
    for label, file in files:
        text = budget.take(label, file)
        if text:
            lines += [f"{heading} {label}", text]
    return lines if files else ["(none yet)"]


def _long_term(files: Labelled) -> list[str]:
    return [f"- {label}: {describe(file)}" for label, file in files] or ["(none yet)"]


def _peers(peers: Sequence[PeerMemory]) -> str:
    budget = _Budget(PEERS_SHORT_TERM_BYTES)
    lines = ["### Your peers' memories, as of their latest answers (read-only)"]
    for peer in peers:
        memory = peer.folder / MEMORY
        short_term = [(str(memory / file.tier / file.name), file) for file in peer.short_term.files]
        long_term = [(str(memory / file.tier / file.name), file) for file in peer.long_term.files]
        lines += [f"#### {peer.label}", "Short-term:", *_short_term(short_term, budget, "#####")]
        lines += ["Long-term:", *_long_term(long_term)]
    return "\n".join([*lines, *budget.note()])


def describe(file: MemoryFile) -> str:
    """A file in one line: its front matter's description (else its name), else its first line."""
    body = file.text.splitlines()
    fields: dict[str, str] = {}
    if body and body[0].strip() == "---":
        end = next((number for number, line in enumerate(body[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            for line in body[1:end]:
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
            body = body[end + 1 :]
    first = next((line for line in body if line.strip()), "")
    chosen = fields.get("description") or fields.get("name") or first.strip().lstrip("#").strip()
    return one_line(chosen, DESCRIPTION_CHARS) or "(empty)"

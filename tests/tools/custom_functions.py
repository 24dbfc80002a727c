"""Functions a test config offers as custom tools."""

from __future__ import annotations

import asyncio
from pathlib import Path


def add_numbers(a: int, b: int = 2) -> dict[str, int]:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return {"sum": a + b}


async def shout(text: str) -> str:
    """Say it louder."""
    await asyncio.sleep(0)
    return text.upper() + "!"


def note_in_workspace(note: str, agent_cwd: str, prefix: str = "") -> str:
    """Write a note to the agent's workspace."""
    Path(agent_cwd, "note.txt").write_text(prefix + note)
    return "noted"


def broken(value: str) -> str:
    """Always fails."""
    raise RuntimeError(f"cannot handle {value}")


def wait_for_file(path: str) -> str:
    """Wait until a file exists (at most a minute)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if Path(path).exists() and Path(path).read_text():
            return "there"
        time.sleep(0.02)
    return "never appeared"


def word_count(text: str) -> int:
    """How many words ``text`` has.

    Args:
        text: Any text.
    """
    return len(text.split())

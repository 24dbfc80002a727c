"""The end of an answered turn, as MassGen ends it in its filesystem memory mode: every agent's memory
files are merged into the winner's workspace (the turn's output folder), and the winner's memory files,
merged, are then given to every agent for the next turn.

A file only one agent has is copied; one the winner has too gets the other's text appended under
``# From <agent>`` (unless the winner's already holds it, so a file carried over twice is not doubled).
When the winner's file of that name cannot be used (a link, too large) or the merged text would pass
``FILE_BYTES``, the other's file is kept beside it as ``<name>.<agent>.md``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from massgen_cli.memory.filesystem.folder import (
    FILE_BYTES,
    SUFFIX,
    TIERS,
    MemoryFile,
    UnsafeMemoryFile,
    read_tier,
    write_memory_file,
)


def merge_into_winner(workspaces: Mapping[str, Path], winner: str) -> list[str]:
    """Merge every agent's memory files into ``winner``'s workspace, then give the result to the others;
    returns what could not be done (the rest is done)."""
    problems: list[str] = []
    others = {agent_id: folder for agent_id, folder in workspaces.items() if agent_id != winner}
    target = workspaces[winner]
    for tier in TIERS:
        for author, folder in others.items():
            for file in read_tier(folder, tier).files:
                problems += _merged(target, file, author, winner)
        merged = read_tier(target, tier).files
        for agent_id, folder in others.items():
            problems += _given(folder, merged, agent_id)
    return problems


def _merged(target: Path, file: MemoryFile, author: str, winner: str) -> list[str]:
    """``file`` of ``author`` merged into the winner's tier."""
    present = read_tier(target, file.tier).by_name().get(file.name)
    incoming = file.text.strip()
    try:
        if present is None:
            _create_or_beside(target, file, author)
        elif incoming not in present.text:
            combined = f"{present.text.rstrip()}\n\n---\n\n# From {author}\n\n{incoming}\n"
            if len(combined.encode("utf-8")) > FILE_BYTES:
                write_memory_file(target, file.tier, _beside(file.name, author), file.text)
            else:
                write_memory_file(target, file.tier, file.name, combined)
    except OSError as error:
        return [f"{file.path} of {author} was not merged into the workspace of {winner}: {_why(error)}"]
    return []


def _create_or_beside(target: Path, file: MemoryFile, author: str) -> None:
    """A new file in the winner's tier; beside it when a file of that name is there but unusable."""
    try:
        write_memory_file(target, file.tier, file.name, file.text, replace=False)
    except FileExistsError:
        write_memory_file(target, file.tier, _beside(file.name, author), file.text)


def _given(folder: Path, files: list[MemoryFile], agent_id: str) -> list[str]:
    problems = []
    for file in files:
        try:
            write_memory_file(folder, file.tier, file.name, file.text)
        except OSError as error:
            problems.append(f"{file.path} was not carried over to the workspace of {agent_id}: {_why(error)}")
    return problems


def _beside(name: str, author: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", author)[:40]
    return f"{name.removesuffix(SUFFIX)}.{safe}{SUFFIX}"


def _why(error: OSError) -> str:
    return str(error) if isinstance(error, UnsafeMemoryFile) else error.strerror or str(error)

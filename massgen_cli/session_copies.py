"""A session's copies: the working copy in the state folder and the one a memory server keeps for every
machine, and how they become one.

The server owns the numbering of a session's turns. A turn taken while the server could not be reached
keeps a number of this folder's own, marked offline (``offline_turns`` in the record); when the folder
meets the server again, such turns are appended after the server's with the next free numbers (they
never overwrite a turn the server has, nor are overwritten), and the caller re-files their memory
records under the new numbers. Both copies are JSON files by name (``session.json``, ``threads.json``…),
so this works on their text and knows nothing of the classes that read them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from massgen_cli.errors import MassGenError, UsageError

RECORD_FILE = "session.json"
THREADS_FILE = "threads.json"
KEPT_SUFFIXES = (".json", ".jsonl")
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ServedCopy:
    """The server's copy of a session: the turns it has numbered and the session folder's files."""

    turns: int
    files: dict[str, str]


class SessionMirror(Protocol):
    """Where a session is kept beyond this state folder (a memory server), so it continues anywhere."""

    def where(self) -> str: ...
    def claim(self, session_id: str) -> None: ...
    def copy(self, session_id: str) -> ServedCopy | None: ...
    def take_turn(self, session_id: str, first: int) -> int:
        """The session's next turn number, counted on the server (``first`` when it has none yet)."""
        ...

    def push(self, session_id: str, directory: Path) -> None: ...
    def release(self, session_id: str) -> None: ...
    def delete(self, session_id: str) -> bool: ...
    def records(self) -> dict[str, dict[str, Any]]: ...
    def close(self) -> None: ...


def meet(mirror: SessionMirror, session_id: str, directory: Path) -> dict[int, int]:
    """The session folder and the server's copy made one (written in the folder; the caller pushes it):
    the turns this folder took offline, by their number here, with the number the server gives them."""
    served = mirror.copy(session_id)
    merged, filed = merge(folder_files(directory) if directory.is_dir() else {}, served)
    write_folder(directory, merged)
    return filed


@dataclass(frozen=True)
class Claimed:
    """The mirror that holds the session (None without one, or when it cannot be reached: then
    ``unreachable`` says why), and this folder's offline turns it numbered anew (old number to new)."""

    mirror: SessionMirror | None = None
    unreachable: str | None = None
    refiled: dict[int, int] = field(default_factory=dict)


def claim(mirror: SessionMirror | None, session_id: str, directory: Path, unreachable: bool) -> Claimed:
    """Hold the session in ``mirror`` and make this folder's copy and the server's one; without the
    mirror, and why, when it cannot be reached. A session another machine holds is a ``UsageError``."""
    if mirror is None:
        return Claimed(unreachable="" if unreachable else None)
    try:
        mirror.claim(session_id)
        refiled = meet(mirror, session_id, directory)
    except UsageError:
        raise
    except MassGenError as error:
        mirror.release(session_id)
        return Claimed(unreachable=f" ({mirror.where()}: {error})")
    return Claimed(mirror, refiled=refiled)


def merge(local: dict[str, str], served: ServedCopy | None) -> tuple[dict[str, str], dict[int, int]]:
    """The files of the session made from this folder's (``local``) and the server's: the server's,
    with this folder's offline turns appended (renumbered after the turns the server counted) and what
    its agents said in them added to their threads; and the renumbering. With no copy on the server
    the numbers are free, and the folder's files are the session's."""
    mine = _record(local)
    if mine is None:
        return (dict(served.files) if served else {}), {}
    exchanges = mine.get("exchanges", [])
    if served is None:
        pending = sorted(set(mine.get("offline_turns") or []))
        mine.update(offline_turns=[], offline_since=None)
        return {**local, RECORD_FILE: json.dumps(mine)}, {turn: turn for turn in pending}
    uncounted = {exchange["turn"] for exchange in exchanges if exchange["turn"] > served.turns}
    pending = sorted(
        set(mine.get("offline_turns") or []) | uncounted
    )  # beyond the count: never numbered there
    filed = {old: served.turns + index for index, old in enumerate(pending, start=1)}
    theirs = _record(served.files) or {**mine, "exchanges": [], "turns_completed": 0, "log_folders": []}
    files = {**served.files, RECORD_FILE: json.dumps(_merged_record(mine, theirs, filed, served.turns))}
    threads = _merged_threads(local.get(THREADS_FILE), files.get(THREADS_FILE), mine.get("offline_since"))
    if threads is not None:
        files[THREADS_FILE] = threads
    return files, filed


def _merged_record(
    mine: dict[str, Any], theirs: dict[str, Any], filed: dict[int, int], counted: int
) -> dict[str, Any]:
    """The server's record, with the exchanges it lacks from this folder's: those numbered by the server
    whose save never reached it, and the offline ones under their new numbers."""
    known = {exchange["turn"] for exchange in theirs["exchanges"]}
    exchanges = list(theirs["exchanges"])
    for exchange in mine.get("exchanges", []):
        if exchange["turn"] in filed:
            exchanges.append({**exchange, "turn": filed[exchange["turn"]], "offline": True})
        elif exchange["turn"] not in known and exchange["turn"] <= counted:
            exchanges.append(exchange)
    exchanges.sort(key=lambda exchange: exchange["turn"])
    answered = [e["turn"] for e in exchanges if e.get("status", "answered") == "answered"]
    logs = theirs.get("log_folders", [])
    return {
        **theirs,
        "exchanges": exchanges,
        "turns_started": max(counted + len(filed), theirs.get("turns_started", 0)),
        "turns_completed": max([theirs.get("turns_completed", 0), *answered]),
        "conversation": max(theirs.get("conversation", 1), mine.get("conversation", 1)),
        "log_folders": logs + [name for name in mine.get("log_folders", []) if name not in logs],
        "lists_all_runs": theirs.get("lists_all_runs", True) and mine.get("lists_all_runs", True),
        "config_path": mine.get("config_path") or theirs.get("config_path"),
        "updated_at": max(theirs.get("updated_at", ""), mine.get("updated_at", "")),
        "offline_turns": [],
        "offline_since": None,
    }


def _merged_threads(local: str | None, served: str | None, since: str | None) -> str | None:
    """The server's threads, with each agent's messages this folder added since its first offline turn
    began (and the server does not know) appended; None when the server's stay as they are."""
    if local is None or since is None:
        return None
    try:
        mine, theirs = json.loads(local), json.loads(served) if served else {}
    except ValueError:
        return None
    known = {item.get("id") for items in theirs.values() for item in items}
    for agent_id, items in mine.items():
        added = [i for i in items if i.get("timestamp", "") >= since and i.get("id") not in known]
        if added:
            theirs[agent_id] = [*theirs.get(agent_id, []), *added]
    return json.dumps(theirs)


def _record(files: dict[str, str]) -> dict[str, Any] | None:
    try:
        data = json.loads(files[RECORD_FILE])
    except (KeyError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def local_turns(directory: Path) -> int:
    """The turns the session's record there has started (0 when there is none, or it cannot be read)."""
    try:
        data = json.loads((directory / RECORD_FILE).read_text(encoding="utf-8"))
        return int(max(data.get("turns_started", 0), data.get("turns_completed", 0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0


def folder_files(directory: Path) -> dict[str, str]:
    """The session folder's data files, by name, as a server keeps them (each up to ``MAX_FILE_BYTES``)."""
    return {
        path.name: path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(directory.iterdir())
        if kept(path.name) and path.is_file() and path.stat().st_size <= MAX_FILE_BYTES
    }


def write_folder(directory: Path, files: dict[str, str]) -> bool:
    """Write a server's copy of the session's files into its folder (only data file names); whether
    there was anything."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        if kept(name):
            (directory / name).write_text(text, encoding="utf-8")
    return bool(files)


def kept(name: str) -> bool:
    """A session's own data file (never its lock, nor a path: names come from the server)."""
    return (
        name.endswith(KEPT_SUFFIXES)
        and "/" not in name
        and not name.startswith(".")
        and name == Path(name).name
    )


def described(filed: dict[int, int]) -> str:
    """What a renumbering did, in a sentence's words: ``the turn taken here … (turn 2 here) is filed on
    the memory server as turn 3``."""
    old, new = _numbers(list(filed)), _numbers(list(filed.values()))
    unreachable = "while the memory server could not be reached"
    if len(filed) == 1:
        return (
            f"the turn taken here {unreachable} (turn {old} here) is filed on the memory server as turn {new}"
        )
    return (
        f"the {len(filed)} turns taken here {unreachable} (turns {old} here) are filed on the memory server "
        f"as turns {new}"
    )


def _numbers(turns: list[int]) -> str:
    """``3``, ``1-3`` or ``2, 5``."""
    if len(turns) > 1 and turns == list(range(turns[0], turns[0] + len(turns))):
        return f"{turns[0]}-{turns[-1]}"
    return ", ".join(map(str, turns))

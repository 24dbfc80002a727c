"""What a Ray task ran, brought back to the driver: the task answers in a state folder of its own on
whichever node runs it, then packs its run logs, its session folder and the memory records it could not
write (the spool) into one archive that travels with its result; the driver unpacks it into its own
state folder, so `massgen logs` and `sessions` there show the task's run and the result's log folder is
a path on the driver."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from massgen_cli.memory.longterm.record.spool import SPOOL_NAME
from massgen_cli.runlogs.reader import logs_root
from massgen_cli.session import sessions_root

MAX_BUNDLE_BYTES = 256 * 1024 * 1024
SPOOL_MEMBER = "spool.jsonl"


def pack(state_dir: Path) -> bytes | None:
    """The task's logs, sessions and spool as a gzipped tar; None when it would pass ``MAX_BUNDLE_BYTES``
    (the logs then stay on the node)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for folder in (logs_root(state_dir), sessions_root(state_dir)):
            if folder.is_dir():
                archive.add(folder, arcname=folder.relative_to(state_dir).as_posix(), filter=_no_locks)
        spool = state_dir / "memory" / SPOOL_NAME
        if spool.is_file():
            archive.add(spool, arcname=SPOOL_MEMBER)
    data = buffer.getvalue()
    return data if len(data) <= MAX_BUNDLE_BYTES else None


def unpack(bundle: bytes, state_dir: Path) -> None:
    """The task's files into the driver's state folder: members stay inside it (tarfile's ``data``
    filter refuses absolute paths, ``..``, links out and special files); spooled records are appended to
    the driver's spool, which the next run that reaches the store writes."""
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as archive:
        spooled = [member for member in archive.getmembers() if member.name == SPOOL_MEMBER]
        others = [member for member in archive.getmembers() if member.name != SPOOL_MEMBER]
        archive.extractall(state_dir, members=others, filter="data")
        for member in spooled:
            records = archive.extractfile(member)
            if records is not None:
                spool = state_dir / "memory" / SPOOL_NAME
                spool.parent.mkdir(parents=True, exist_ok=True)
                with spool.open("ab") as kept:
                    kept.write(records.read())


def on_driver(path: str | None, task_state_dir: Path, driver_state_dir: Path) -> str | None:
    """A path inside the task's state folder, as it is on the driver after ``unpack``."""
    if path is None:
        return None
    try:
        return str(driver_state_dir / Path(path).relative_to(task_state_dir))
    except ValueError:
        return path


def _no_locks(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if Path(member.name).name == ".lock" else member

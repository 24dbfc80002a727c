"""Faults in the state folder, injected for real: a folder other users may write (made private and said,
or refused with the command that fixes it), a local Qdrant store damaged on disk (named, left as it is,
the run answers and keeps its records in the spool) and a spool cut mid-line (what cannot be read is set
aside and said, with both paths and the counts)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.record.spool import Spool, SpoolTarget, WinnerMark
from massgen_cli.memory.longterm.store.vector_stores import close_clients, store_identity
from massgen_cli.state import SharedStateFolderError, make_private
from tests.conftest import InProcessRun, run_cli, state_folder, write_config
from tests.memory.conftest import open_store

ANSWER = "The ferry leaves at 06:40 from pier 3."
CONFIG = f"""
agent:
  id: keeper
  backend: {{type: scripted, responses: ["{ANSWER}"]}}
memory:
  enabled: true
  persistent_memory: {{enabled: true}}
"""
OTHER_UID = 54321


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def open_to_everyone(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o777)  # past the umask, as a folder made by hand or by another tool can be
    assert mode_of(folder) == 0o777
    return folder


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def said(run: InProcessRun) -> str:
    """What the run wrote on stderr, with the console's line wrapping undone."""
    return " ".join(run.err.getvalue().split())


def answer_once(run: InProcessRun, question: str) -> str:
    try:
        return run.app.ask(question).final_answer or ""
    finally:
        run.app.close()


def test_a_state_folder_others_may_write_is_made_private_and_said_once(tmp_path: Path):
    state = open_to_everyone(state_folder())
    first = run_cli("sessions", "list")
    assert first.returncode == 0, first.stderr
    assert mode_of(state) == 0o700
    warning = f"warning: the state folder {state} could be written by other users (mode 0777)"
    assert first.stderr.count(warning) == 1, first.stderr
    assert "so it is now its user's only (mode 0700)" in first.stderr
    again = run_cli("sessions", "list")
    assert again.returncode == 0 and "warning" not in again.stderr, "said once: the folder is private now"


@pytest.mark.parametrize(("before", "after"), [(0o775, 0o700), (0o720, 0o700), (0o577, 0o500)])
def test_only_the_users_bits_are_kept(tmp_path: Path, before: int, after: int):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(before)
    warnings: list[str] = []
    make_private(folder, warnings.append)
    assert mode_of(folder) == after
    assert warnings == [
        f"the state folder {folder} could be written by other users (mode {before:04o}); it holds "
        f"sessions, logs and memories, so it is now its user's only (mode {after:04o})"
    ]


def test_a_private_folder_is_left_as_it_is(tmp_path: Path):
    folder = tmp_path / "private"
    folder.mkdir()
    folder.chmod(0o755)
    warnings: list[str] = []
    make_private(folder, warnings.append)
    assert mode_of(folder) == 0o755 and warnings == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user takes root")
def test_a_state_folder_of_another_user_is_refused_with_the_command_that_fixes_it(tmp_path: Path):
    state = open_to_everyone(state_folder())
    os.chown(state, OTHER_UID, -1)
    write_config(tmp_path, CONFIG)
    for args in (["sessions", "list"], ["--config", "config.yaml", "When does the ferry leave?"]):
        refused = run_cli(*args)
        assert refused.returncode == 2, refused.stderr
        assert f"the state folder {state} can be written by other users (mode 0777)" in refused.stderr
        assert f"run `chmod go-w {state}` as its owner (or `sudo chown" in refused.stderr, refused.stderr
        assert ANSWER not in refused.stdout
    assert mode_of(state) == 0o777 and state.stat().st_uid == OTHER_UID, "another's folder is not changed"
    assert list(state.iterdir()) == [], "nothing was written there"


def test_a_folder_users_share_like_tmp_is_refused(tmp_path: Path):
    folder = tmp_path / "like-tmp"
    folder.mkdir()
    folder.chmod(0o1777)
    with pytest.raises(SharedStateFolderError, match=r"is a folder other users share \(mode 1777") as refused:
        make_private(folder, lambda message: None)
    assert refused.value.exit_code == 2 and "chmod" not in str(refused.value)
    assert mode_of(folder) == 0o1777


def test_a_damaged_qdrant_store_is_named_left_as_it_is_and_the_run_answers(tmp_path: Path):
    assert answer_once(InProcessRun(tmp_path, CONFIG, session_id="ferry"), "When?") == ANSWER
    store = state_folder() / "qdrant"
    shard = store / "shards" / "massgen_memories"
    (shard / "edge_config.json").write_bytes(b"this is not what was written" * 500)
    before = fingerprint(store)

    damaged = InProcessRun(tmp_path, CONFIG, session_id="ferry")
    assert answer_once(damaged, "And the pier?") == ANSWER
    spool = state_folder() / "memory" / "spool.jsonl"
    assert (
        f"the local Qdrant store at {store} is damaged: its shard {shard} cannot be read "
        "(Exception: Service runtime error: IO Error: Failed to deserialize" in said(damaged)
    ), said(damaged)
    assert "Nothing in it was changed" in said(damaged)
    assert f"mv {store} {store}.damaged" in said(damaged)
    assert f"This run's memory records are kept in {spool}" in said(damaged)
    assert "a bug" not in said(damaged) and "unexpected" not in said(damaged)
    assert fingerprint(store) == before, "the damaged store is left as it is"
    assert ANSWER in spool.read_text(), "the run's records wait in the spool"

    store.rename(store.with_name("qdrant.damaged"))  # what the message says to do
    fresh = InProcessRun(tmp_path, CONFIG, session_id="ferry")
    assert answer_once(fresh, "Once more?") == ANSWER
    assert "memory record(s) kept from an earlier run" in said(fresh), said(fresh)
    assert not spool.exists(), "the kept records were written to the new store"


def test_a_damaged_store_of_the_earlier_layout_is_named_and_left_as_it_is(tmp_path: Path):
    from qdrant_client import QdrantClient, models

    store = state_folder() / "qdrant"
    earlier = QdrantClient(path=str(store))  # how earlier versions kept the local store
    earlier.create_collection(
        "massgen_memories", models.VectorParams(size=384, distance=models.Distance.COSINE)
    )
    earlier.upsert("massgen_memories", [models.PointStruct(id=1, vector=[0.5] * 384, payload={"data": "x"})])
    earlier.close()
    points = store / "collection" / "massgen_memories" / "storage.sqlite"
    points.write_bytes(b"this is not what was written" * 500)
    before = fingerprint(store)

    damaged = InProcessRun(tmp_path, CONFIG, session_id="ferry")
    assert answer_once(damaged, "When?") == ANSWER
    assert (
        f"the local Qdrant store at {store} is damaged: its points file {points} cannot be read "
        "(DatabaseError: file is not a database). Nothing in it was changed" in said(damaged)
    ), said(damaged)
    assert fingerprint(store) == before, "the damaged store is left as it is, nothing half moved"
    assert not (store / "shards").exists() or not any((store / "shards").iterdir())


def test_a_spool_cut_mid_line_is_set_aside_and_said(tmp_path: Path):
    where = store_identity(PersistentMemoryConfig(enabled=True), state_folder())
    target = SpoolTarget(where, "general", "general")
    spool = Spool(state_folder() / "memory" / "spool.jsonl", target)
    context = RecordContext("keeper", "tides", 1)
    spool.keep([{"role": "assistant", "content": "The tide turns at noon."}], context)
    spool.keep_winner(WinnerMark("tides", 1, "keeper"))
    whole = spool.path.read_bytes()
    spool.keep([{"role": "assistant", "content": "This record is cut short."}], context)
    spool.path.write_bytes(spool.path.read_bytes()[: len(whole) + 40])  # a write that died mid-line
    cut_line = spool.path.read_bytes()[len(whole) :].decode()
    spool.keep([{"role": "assistant", "content": "The bell rings at six."}], context)

    run = InProcessRun(tmp_path, CONFIG, session_id="tides")
    assert answer_once(run, "When?") == ANSWER
    assert (
        f"1 damaged line(s) of the memory spool {spool.path} could not be read and were set aside in "
        f"{spool.damaged_path}; the 3 readable one(s) were kept" in said(run)
    ), said(run)
    assert spool.damaged_path.read_text() == cut_line + "\n", "the cut line is kept as it was"
    assert not spool.path.exists()
    store = open_store(state_folder())
    try:
        texts = {memory.text for memory in store.list_memories(session_id="tides")}
    finally:
        store.close()
        close_clients()
    assert {"The tide turns at noon.", "The bell rings at six."} <= texts, texts

"""How a state folder's copy of a session and the memory server's become one: the server's turns stay as
they are, the folder's offline turns are appended with the next free numbers, and their memory records
in the spool are re-filed under those numbers (another session's, and damaged lines, stay as they were)."""

from __future__ import annotations

import json
from typing import Any

from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.record.spool import Spool, SpoolTarget, WinnerMark
from massgen_cli.session_copies import RECORD_FILE, THREADS_FILE, ServedCopy, described, merge

SINCE = "2026-01-02T00:00:00+00:00"


def record(*exchanges: tuple[int, str], offline: tuple[int, ...] = (), **fields: Any) -> str:
    return json.dumps(
        {
            "session_id": "kbA",
            "exchanges": [{"turn": turn, "question": question} for turn, question in exchanges],
            "turns_started": max((turn for turn, _ in exchanges), default=0),
            "turns_completed": max((turn for turn, _ in exchanges), default=0),
            "offline_turns": list(offline),
            "offline_since": SINCE if offline else None,
            **fields,
        }
    )


def message(identity: str, content: str, at: str) -> dict[str, Any]:
    return {"id": identity, "message": {"role": "user", "content": content}, "timestamp": at}


def questions(files: dict[str, str]) -> list[tuple[int, str, bool]]:
    data = json.loads(files[RECORD_FILE])
    return [(e["turn"], e["question"], e.get("offline", False)) for e in data["exchanges"]]


def test_offline_turns_follow_the_servers_and_never_overwrite_them():
    local = {RECORD_FILE: record((1, "heron"), (2, "otter"), (3, "beaver"), offline=(2, 3))}
    served = ServedCopy(2, {RECORD_FILE: record((1, "heron"), (2, "falcon")), "entries.json": "{}"})
    files, filed = merge(local, served)
    assert filed == {2: 3, 3: 4}
    assert questions(files) == [
        (1, "heron", False),
        (2, "falcon", False),
        (3, "otter", True),
        (4, "beaver", True),
    ]
    merged = json.loads(files[RECORD_FILE])
    assert (merged["turns_started"], merged["offline_turns"], merged["offline_since"]) == (4, [], None)
    assert files["entries.json"] == "{}", "the server's other files are the session's"


def test_a_turn_the_server_numbered_whose_save_never_reached_it_keeps_its_number():
    local = {RECORD_FILE: record((1, "heron"), (2, "otter"))}
    served = ServedCopy(2, {RECORD_FILE: record((1, "heron"))})
    files, filed = merge(local, served)
    assert filed == {}
    assert questions(files) == [(1, "heron", False), (2, "otter", False)]


def test_turns_beyond_the_servers_count_were_never_numbered_there_and_are_filed_after_it():
    """A folder written before turns were marked offline: its turn 2 is past the server's count."""
    local = {RECORD_FILE: record((1, "heron"), (2, "otter"))}
    served = ServedCopy(1, {RECORD_FILE: record((1, "heron"))})
    _, filed = merge(local, served)
    assert filed == {2: 2}


def test_with_no_copy_on_the_server_the_folders_numbers_are_free():
    local = {RECORD_FILE: record((1, "heron"), (2, "otter"), offline=(1, 2))}
    files, filed = merge(local, None)
    assert filed == {1: 1, 2: 2}
    assert json.loads(files[RECORD_FILE])["offline_turns"] == []
    assert described(filed) == (
        "the 2 turns taken here while the memory server could not be reached (turns 1-2 here) are filed "
        "on the memory server as turns 1-2"
    )


def test_what_the_agents_said_offline_is_added_to_the_servers_threads_once():
    before, during = "2026-01-01T00:00:00+00:00", "2026-01-02T10:00:00+00:00"
    shared = message("m1", "heron", before)
    local_threads = {"agent_a": [shared, message("m3", "otter", during)]}
    served_threads = {"agent_a": [shared, message("m2", "falcon", during)]}
    local = {
        RECORD_FILE: record((1, "heron"), (2, "otter"), offline=(2,)),
        THREADS_FILE: json.dumps(local_threads),
    }
    served = ServedCopy(
        2, {RECORD_FILE: record((1, "heron"), (2, "falcon")), THREADS_FILE: json.dumps(served_threads)}
    )
    files, _ = merge(local, served)
    said = [item["message"]["content"] for item in json.loads(files[THREADS_FILE])["agent_a"]]
    assert said == ["heron", "falcon", "otter"]


def test_the_spool_refiles_records_and_winners_of_the_session_only(tmp_path):
    spool = Spool(tmp_path / "spool.jsonl", SpoolTarget("store", "general", "general"))
    spool.keep([{"role": "user", "content": "otter"}], RecordContext("agent_a", "kbA", 2))
    spool.keep([{"role": "user", "content": "heron"}], RecordContext("agent_a", "other", 2))
    spool.keep_winner(WinnerMark("kbA", 2, "agent_a"))
    with spool.path.open("a") as file:
        file.write("not json\n")
    assert spool.refile("kbA", {2: 3}) == 2
    lines = spool.path.read_text().splitlines()
    assert lines[-1] == "not json"
    kept = spool.take()
    assert [(context.session_id, context.turn) for _, context in kept.records] == [("kbA", 3), ("other", 2)]
    assert kept.winners == [WinnerMark("kbA", 3, "agent_a")]

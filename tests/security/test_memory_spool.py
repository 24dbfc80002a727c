"""Records that could not be written are kept in a spool under the state folder and written by the
next run that can: here the store cannot open (a file where its folder should be), then it can. The runs
and memory commands run in the test's process, one after the other: the spool file is what carries the
records from one run to the next."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config

CONFIG = """
agent:
  id: keeper
  backend: {type: scripted, responses: ["The ferry leaves at 06:40 from pier 3."]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def test_records_of_a_run_without_a_store_are_written_by_the_next_run(tmp_path: Path):
    state = state_folder()
    state.mkdir(parents=True, exist_ok=True)
    blocker = state / "qdrant"
    blocker.write_text("not a folder")
    write_config(tmp_path, CONFIG)
    first = massgen("--config", "config.yaml", "--session", "ferry", "When does the ferry leave?")
    assert first.exit_code == 0 and "long-term memory is off for this run" in first.stderr
    spool = state / "memory" / "spool.jsonl"
    lines = [json.loads(line) for line in spool.read_text().splitlines()]
    kept = [item for item in lines if "messages" in item]
    assert any("06:40" in m["content"] for item in kept for m in item["messages"])
    assert {item["context"]["session_id"] for item in kept} == {"ferry"}
    assert [item["winner"]["agent_id"] for item in lines if "winner" in item] == ["keeper"]
    still_off = massgen("--config", "config.yaml", "--session", "ferry", "Still there?")
    assert still_off.exit_code == 0
    assert len(spool.read_text().splitlines()) > len(lines), "a run that cannot write keeps what it had"

    blocker.unlink()
    second = massgen("--config", "config.yaml", "--session", "ferry", "And the pier?")
    assert second.exit_code == 0, second.stderr
    assert "memory record(s) kept from an earlier run" in second.stderr
    assert not spool.exists()
    found = massgen("memory", "search", "ferry leaves pier", "--session", "ferry", "--json")
    texts = [json.loads(line)["text"] for line in found.stdout.splitlines()]
    assert any("06:40" in text for text in texts), texts


def test_a_write_that_keeps_failing_is_kept_in_the_spool(tmp_path: Path):
    import asyncio

    from massgen_cli.memory.longterm.record.background import MemoryRecorder
    from massgen_cli.memory.longterm.record.memories import RecordContext
    from massgen_cli.memory.longterm.record.spool import Spool, SpoolTarget

    class FullDisk:
        """A store whose every write fails, as on a full disk."""

        def record(self, messages, context):  # type: ignore[no-untyped-def]
            raise OSError(28, "No space left on device")

    spool = Spool(tmp_path / "spool.jsonl", SpoolTarget("qdrant at there", "general", "general"))
    notices: list[object] = []

    async def run() -> None:
        recorder = MemoryRecorder(FullDisk(), notices.append, spool)
        recorder.submit([{"role": "user", "content": "keep me"}], RecordContext("a", "s", 1), None)
        await recorder.close()

    asyncio.run(run())
    [(messages, context)] = spool.take().records
    assert messages == [{"role": "user", "content": "keep me"}] and context == RecordContext("a", "s", 1)
    assert any("No space left on device" in str(n) for n in notices), "the failure was said"


TWO_AGENTS = """
agents:
  - id: winner
    backend:
      type: scripted
      responses: [{tool: new_answer, args: {content: "The vault opens with the brass key."}},
                  {tool: vote, args: {agent_id: agent1, reason: "right"}}]
  - id: loser
    backend:
      type: scripted
      responses: [{tool: new_answer, args: {content: "The vault opens with the copper key."}},
                  {tool: vote, args: {agent_id: agent1, reason: "right"}}]
orchestrator:
  final_presentation: reuse
  shared_memory: {conversation: false, persistent: true}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def test_shared_records_and_the_winner_of_a_turn_are_kept_too(tmp_path: Path):
    """While the store is off, the orchestrator's shared records and the turn's winner go to the spool
    as well; once written, the winner's turn-1 answer is visible to other agents and the loser's is not."""
    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
    from massgen_cli.memory.longterm.retrieve.visibility import Viewer
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    state = state_folder()
    state.mkdir(parents=True, exist_ok=True)
    (state / "qdrant").write_text("not a folder")
    write_config(tmp_path, TWO_AGENTS)
    first = massgen("--config", "config.yaml", "--session", "vault", "How does the vault open?")
    assert first.exit_code == 0 and "brass key" in first.stdout, first.stderr
    kept = state / "memory" / "spool.jsonl"
    held = kept.read_text()
    assert '"level": "working"' in held, "the shared records are kept"
    assert '"winner": {"session_id": "vault", "turn": 1, "agent_id": "winner"' in held

    (state / "qdrant").unlink()
    second = massgen("--config", "config.yaml", "--session", "vault", "And again?")
    assert second.exit_code == 0, second.stderr
    assert not kept.exists()
    store = PersistentMemory(
        PersistentMemoryConfig(enabled=True), state, domain="general", task_type="general"
    )
    try:
        seen = {
            hit.text
            for hit in store.search(
                "vault key", limit=20, scope=SearchFilter(viewer=Viewer("observer", "vault", 2))
            )
        }
    finally:
        store.close()
    assert "The vault opens with the brass key." in seen, seen
    assert "The vault opens with the copper key." not in seen, "the loser's turn-1 records stay hidden"


ELSEWHERE = """
agent:
  id: keeper
  backend: {type: scripted, responses: ["Noted."]}
memory:
  enabled: true
  domain: harbour
  persistent_memory: {enabled: true, path: STORE}
"""


def test_a_record_kept_for_one_store_waits_for_a_run_with_that_store(tmp_path: Path):
    """Records spooled by a run whose store would not open carry their store, domain and task type: a run
    with another config leaves them waiting (and says so, as `memory` commands do); the next run with
    their own store writes them, keyed as that run would have."""
    blocked = tmp_path / "harbour-store"
    blocked.write_text("not a folder")
    write_config(tmp_path, ELSEWHERE.replace("STORE", str(blocked)), name="harbour.yaml")
    first = massgen("--config", "harbour.yaml", "--session", "ferry", "When does the ferry leave?")
    assert first.exit_code == 0 and "long-term memory is off for this run" in first.stderr
    spool = state_folder() / "memory" / "spool.jsonl"
    [target] = {json.dumps(json.loads(line).get("target")) for line in spool.read_text().splitlines()
                if "messages" in line}  # fmt: skip
    expected = {"store": f"qdrant at {blocked}", "domain": "harbour", "task_type": "general"}
    assert json.loads(target) == expected

    write_config(tmp_path, CONFIG)
    other = massgen("--config", "config.yaml", "--session", "ferry", "Anything else?")
    assert other.exit_code == 0, other.stderr
    assert f"wait for qdrant at {blocked} (domain harbour, task type general)" in other.stderr
    assert spool.exists() and "When does the ferry leave?" in spool.read_text()
    listed = massgen("memory", "list", "--config", "config.yaml", "--json")
    assert "When does the ferry leave?" not in listed.stdout, "not written into the other store"
    assert f"wait for qdrant at {blocked}" in listed.stderr
    own = massgen("memory", "list", "--config", "harbour.yaml")
    assert "are not in this store yet: the next run with this config writes them" in own.stderr

    blocked.unlink()
    second = massgen("--config", "harbour.yaml", "--session", "ferry", "And the pier?")
    assert second.exit_code == 0, second.stderr
    assert "memory record(s) kept from an earlier run" in second.stderr
    assert not spool.exists() or "When does the ferry leave?" not in spool.read_text()
    written = massgen("memory", "list", "--config", "harbour.yaml", "--session", "ferry", "--json")
    keys = {json.loads(line)["text"]: json.loads(line)["key"] for line in written.stdout.splitlines()}
    assert keys["When does the ferry leave?"].startswith("harbour:general:"), keys

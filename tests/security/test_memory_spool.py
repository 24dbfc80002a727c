"""Records that could not be written are kept in a spool under the state folder and written by the
next run that can: here the store cannot open (a file where its folder should be), then it can."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli, write_config

CONFIG = """
agent:
  id: keeper
  backend: {type: scripted, responses: ["The ferry leaves at 06:40 from pier 3."]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def test_records_of_a_run_without_a_store_are_written_by_the_next_run(tmp_path: Path):
    state = Path(os.environ["MASSGEN_HOME"])
    state.mkdir(parents=True, exist_ok=True)
    blocker = state / "qdrant"
    blocker.write_text("not a folder")
    write_config(tmp_path, CONFIG)
    first = run_cli("--config", "config.yaml", "--session", "ferry", "When does the ferry leave?")
    assert first.returncode == 0 and "long-term memory is off for this run" in first.stderr
    spool = state / "memory" / "spool.jsonl"
    kept = [json.loads(line) for line in spool.read_text().splitlines()]
    assert any("06:40" in m["content"] for item in kept for m in item["messages"])
    assert {item["context"]["session_id"] for item in kept} == {"ferry"}
    still_off = run_cli("--config", "config.yaml", "--session", "ferry", "Still there?")
    assert still_off.returncode == 0
    assert len(spool.read_text().splitlines()) > len(kept), "a run that cannot write keeps what it had"

    blocker.unlink()
    second = run_cli("--config", "config.yaml", "--session", "ferry", "And the pier?")
    assert second.returncode == 0, second.stderr
    assert "memory record(s) kept from an earlier run" in second.stderr
    assert not spool.exists()
    found = run_cli("memory", "search", "ferry leaves pier", "--session", "ferry", "--json")
    texts = [json.loads(line)["text"] for line in found.stdout.splitlines()]
    assert any("06:40" in text for text in texts), texts


def test_a_write_that_keeps_failing_is_kept_in_the_spool(tmp_path: Path):
    import asyncio

    from massgen_cli.memory.longterm.background import MemoryRecorder
    from massgen_cli.memory.longterm.records import RecordContext
    from massgen_cli.memory.longterm.spool import Spool

    class FullDisk:
        """A store whose every write fails, as on a full disk."""

        def record(self, messages, context):  # type: ignore[no-untyped-def]
            raise OSError(28, "No space left on device")

    spool = Spool(tmp_path / "spool.jsonl")
    notices: list[object] = []

    async def run() -> None:
        recorder = MemoryRecorder(FullDisk(), notices.append, spool)
        recorder.submit([{"role": "user", "content": "keep me"}], RecordContext("a", "s", 1), None)
        await recorder.close()

    asyncio.run(run())
    [(messages, context)] = spool.take()
    assert messages == [{"role": "user", "content": "keep me"}] and context == RecordContext("a", "s", 1)
    assert any("No space left on device" in str(n) for n in notices), "the failure was said"

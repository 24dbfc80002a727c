"""With Qdrant in server mode, the server is the whole truth of long-term memory and of sessions: two
state folders (two machines) sharing one Qdrant see each other's memories, marks, values and sessions.

No Qdrant server can run here: the server is qdrant-client's in-process engine (local mode, the same
API), reached through the client the process shares for the configured server address. The address
itself is tested where it matters: a closed port is one clear line, and the turn goes on."""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from massgen_cli.cli.batch_ray import index_in_state_folder
from massgen_cli.config import load_config
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import UsageError
from massgen_cli.memory.longterm.record.memories import RecordContext, Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.qdrant.index import QdrantIndex
from massgen_cli.memory.longterm.store.qdrant.sessions import QdrantSessions
from massgen_cli.memory.longterm.store.vector_stores import close_clients, share_server_client
from massgen_cli.session import Exchange, open_session
from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until, write_config
from tests.memory.conftest import index_kept_in_the_folder
from tests.memory.longterm.test_server_truth import FALCON_RUN
from tests.script_module import load_script
from tests.servers.postgres import free_port
from tests.servers.qdrant import in_process_server

SERVER = "http://qdrant.invalid:6333"
CONFIG = (
    FALCON_RUN
    + """    vector_store: qdrant
    qdrant: {{mode: server, url: "{url}", collection_name: {collection}}}
"""
)


def settings(collection: str, url: str = SERVER) -> PersistentMemoryConfig:
    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "qdrant",
            "qdrant": {"mode": "server", "url": url, "collection_name": collection},
        }
    )


@pytest.fixture
def collection() -> str:
    return f"truth_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    """The Qdrant "server" every folder of the test reaches (Qdrant's engine in this process)."""
    client = in_process_server()
    yield client
    close_clients()
    client.close()


def two_folders(tmp_path: Path, server: QdrantClient, collection: str) -> list[PersistentMemory]:
    share_server_client(settings(collection), server)
    return [
        PersistentMemory(settings(collection), tmp_path / name, domain="general", task_type="general")
        for name in ("a", "b")
    ]


def test_two_folders_see_each_others_memories_marks_values_and_clear(tmp_path, server, collection):
    one, two = two_folders(tmp_path, server, collection)
    one.record(
        [{"role": "assistant", "content": "Otter ridge opens at nine."}], RecordContext("agent_a", "s", 1)
    )
    two.record(
        [{"role": "assistant", "content": "Falcon harbour closes at six."}], RecordContext("agent_b", "s", 1)
    )
    assert {m.text for m in one.list_memories()} == {
        "Otter ridge opens at nine.",
        "Falcon harbour closes at six.",
    }
    [otter] = [m for m in two.list_memories(agent_id="agent_a")]
    assert [h.text for h in two.search("otter ridge", limit=1)] == ["Otter ridge opens at nine."]

    hidden = SearchFilter(viewer=Viewer("agent_b", "s", 2))
    assert "Otter ridge opens at nine." not in {
        h.text for h in two.search("otter ridge", limit=5, scope=hidden)
    }
    one.record_winner("s", 1, "agent_a")
    [shown] = [h for h in two.search("otter ridge", limit=5, scope=hidden) if h.memory.id == otter.id]
    assert shown.source == Source("agent_a", "s", 1, 1), "a winner's memory, shown as the winner's"
    same_turn = SearchFilter(viewer=Viewer("agent_b", "s", 1))
    assert otter.id not in {h.memory.id for h in two.search("otter ridge", limit=5, scope=same_turn)}

    one.index.set_value(otter.id, "general", 0.9)
    assert two.index.values([otter.id], "general") == {otter.id: 0.9}
    assert two.index.ranked_values("general", 5) == [(otter.id, 0.9, 1)]

    assert one.index.mark_stale(StaleMark(otter.id, "closed for winter", "agent_a", session_id="s", turn=2))
    assert not two.index.mark_stale(StaleMark(otter.id, "again", "agent_b")), (
        "the first mark stays, on every machine"
    )
    assert "Otter" not in " ".join(h.text for h in two.search("otter ridge", limit=5))
    assert two.index.stale_marks([otter.id])[otter.id].reason == "closed for winter"
    assert [m.id for m in one.list_memories(include_stale=True) if "Otter" in m.text] == [otter.id]
    assert otter.id not in {m.id for m in one.list_memories()}

    assert two.clear() == 2
    assert one.list_memories(include_stale=True) == [] and one.index.count() == 0


def test_identical_writes_at_once_are_one_memory_with_both_sources(tmp_path, server, collection):
    stores = two_folders(tmp_path, server, collection)
    texts = [f"The budget of project {name} is forty thousand." for name in ("Kite", "Lark", "Wren", "Heron")]
    start = threading.Barrier(2, timeout=60)  # a writer that fails stops the other at its next write
    failures: list[BaseException] = []

    def record(store: PersistentMemory, agent: str) -> None:
        try:
            for text in texts:
                start.wait()
                store.record([{"role": "user", "content": text}], RecordContext(agent, "s", 1))
        except BaseException as error:
            failures.append(error)
            start.abort()

    writers = [
        threading.Thread(target=record, args=pair)
        for pair in zip(stores, ("agent_a", "agent_b"), strict=True)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert not failures, failures
    memories = stores[1].list_memories()
    assert sorted(m.text for m in memories) == sorted(texts)
    for memory in memories:
        assert sorted(s.agent_id for s in memory.sources) == ["agent_a", "agent_b"], memory
    both = SearchFilter(viewer=Viewer("agent_b", "s", 1))
    assert len(stores[0].search("budget of project Kite", limit=10, scope=both)) == len(texts)


def test_the_unique_key_decides_between_two_writers(server, collection):
    first, second = QdrantIndex(server, collection, 4), QdrantIndex(server, collection, 4)
    fields = {"domain": "general", "task_type": "general", "role": "user"}
    first.add("m-1", "general:general:abc", "The gate code is 4411.", fields, Source("agent_a", "s", 1, 1))
    with pytest.raises(KeyTaken):
        second.add(
            "m-2", "general:general:abc", "The gate code is 4411.", fields, Source("agent_b", "s", 1, 1)
        )
    assert second.id_for_key("general:general:abc") == "m-1"
    assert second.source_points(["m-2"]) == {}, "the losing writer's source does not stay behind"
    assert second.add_source("m-1", Source("agent_b", "s", 1, 1))
    assert not first.add_source("m-1", Source("agent_b", "s", 1, 1)), "a known source is not added twice"
    assert [s.agent_id for s in first.get(["m-1"])["m-1"].sources] == ["agent_a", "agent_b"]
    assert not first.has("m-2") and first.count() == 1


def test_a_session_continues_on_the_second_folder_as_turn_two(tmp_path, server, collection):
    first, second = QdrantSessions(server, collection), QdrantSessions(server, collection)
    session = open_session(tmp_path / "a", "shared", interactive=False, config_path=None, mirror=first)
    try:
        assert session.begin_turn() == 1
        session.record_turn(Exchange(1, "What is the code?", "7781", "agent_a"))
        with pytest.raises(UsageError, match="in use by a massgen process on another machine"):
            open_session(tmp_path / "b", "shared", interactive=False, config_path=None, mirror=second)
    finally:
        session.close()
    continued = open_session(tmp_path / "b", "shared", interactive=False, config_path=None, mirror=second)
    try:
        assert [e.question for e in continued.history()] == ["What is the code?"]
        assert continued.begin_turn() == 2
    finally:
        continued.close()
    assert second.delete("shared") and first.copy("shared") is None


def test_a_second_machine_finds_and_continues_what_the_first_recorded(tmp_path, server, collection):
    """The whole command line, on two state folders."""
    config = write_config(tmp_path, CONFIG.format(url=SERVER, collection=collection))
    first, second = tmp_path / "machine-a", tmp_path / "machine-b"
    share_server_client(settings(collection), server)
    on_server = massgen

    answered = on_server(
        "-c", str(config), "--state-dir", str(first), "--session", "kbA", "What is the launch code?"
    )
    assert answered.exit_code == 0 and "7781" in answered.stdout, answered.stderr
    found = on_server("memory", "search", "Falcon launch code", "-c", str(config), "--state-dir", str(second))
    assert "launch code for project Falcon is 7781" in found.stdout, found.stderr

    shutil.rmtree(first)
    again = on_server(
        "-c", str(config), "--state-dir", str(second), "--session", "kbA", "And the code again?"
    )
    assert again.exit_code == 0, again.stderr
    shown = massgen("sessions", "show", "kbA", "--json", "--state-dir", str(second))
    record = json.loads(shown.stdout)
    assert record["turns_completed"] == 2
    assert [e["question"] for e in record["exchanges"]] == ["What is the launch code?", "And the code again?"]
    listed = on_server(
        "memory", "list", "--session", "kbA", "-c", str(config), "--state-dir", str(tmp_path / "c"), "--json"
    )
    turns = {s["turn"] for line in listed.stdout.splitlines() for s in json.loads(line)["sources"]}
    assert turns == {1, 2}, "the first folder is gone and nothing is lost"


def test_a_folder_that_kept_its_index_locally_uploads_it_once(tmp_path, server, collection):
    """Earlier versions kept sources, values, marks and winners in the state folder beside a Qdrant
    server's collection: the first open of the server store moves them there, and `memory migrate`
    says what it moved."""
    otter, falcon = index_kept_in_the_folder(tmp_path)

    share_server_client(settings(collection), server)
    moved_to = PersistentMemory(settings(collection), tmp_path, domain="general", task_type="general")
    try:
        migration = moved_to.migration
        assert migration is not None
        assert (migration.memories, migration.sources) == (2, 1)
        assert (migration.values, migration.winners, migration.stale) == (1, 1, 1)
        [kept] = moved_to.list_memories()
        assert kept.text == otter.text and [s.agent_id for s in kept.sources] == ["agent_a", "agent_b"]
        assert moved_to.index.values([otter.id], "general") == {otter.id: 0.8}
        assert moved_to.index.stale_marks([falcon.id])[falcon.id].reason == "moved"
        assert "Falcon" not in " ".join(h.text for h in moved_to.search("falcon harbour", limit=5))
        viewer = SearchFilter(viewer=Viewer("agent_a", "s", 2))
        [seen] = [h for h in moved_to.search("otter ridge", limit=5, scope=viewer) if h.memory.id == otter.id]
        assert seen.source == Source("agent_a", "s", 1, 1)
    finally:
        moved_to.close()
    config = write_config(tmp_path, CONFIG.format(url=SERVER, collection=collection), "server.yaml")
    again = massgen("memory", "migrate", "-c", str(config), "--state-dir", str(tmp_path))
    assert again.exit_code == 0 and again.stdout.startswith("nothing to move"), again.stdout
    forced = massgen("memory", "migrate", "--again", "-c", str(config), "--state-dir", str(tmp_path))
    assert forced.stdout.strip() == (
        "moved 0 memories (2 the server knew already), 0 sources, 0 learned values, 0 winners and 0 "
        f"stale marks to in-process {collection}"
    ), forced.stdout


def test_migrate_refuses_a_config_without_a_server_store(tmp_path):
    config = write_config(tmp_path, FALCON_RUN.format(), "local.yaml")
    refused = massgen("memory", "migrate", "-c", str(config), "--state-dir", str(tmp_path))
    assert refused.exit_code == 2
    assert "vector_store: qdrant with qdrant.mode: server" in refused.stderr, refused.stderr


def test_an_unreachable_server_is_said_plainly_and_the_turn_goes_on(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    config = write_config(tmp_path, CONFIG.format(url=url, collection="unreachable"))
    assert not index_in_state_folder(load_config(str(config)).config), "Ray tasks keep their own folders"
    run = massgen(
        "-c", str(config), "--state-dir", str(tmp_path / "state"), "--session", "kb", "Launch code?"
    )
    assert run.exit_code == 0 and "7781" in run.stdout, run.stderr
    assert run.stderr.count(f"cannot reach the Qdrant server at {url}") == 1, run.stderr
    assert "long-term memory is off for this run" in run.stderr
    assert "the memory server cannot be reached. Session kb goes on in" in run.stderr
    searched = massgen(
        "memory", "search", "launch code", "-c", str(config), "--state-dir", str(tmp_path / "state")
    )
    assert f"cannot reach the Qdrant server at {url}" in searched.stderr, searched.stderr
    assert "7781" not in searched.stdout, "never the state folder's results instead of the server's"
    assert not (tmp_path / "state" / "memory" / "index.db").exists()


class OldServer:
    """What a Qdrant 1.15 server answers to ``info`` (the version check reads nothing else)."""

    location = "http://old-qdrant:6333"

    def info(self) -> object:
        return type("Info", (), {"version": "1.15.5"})()


def test_a_server_older_than_insert_only_writes_is_refused_plainly():
    from massgen_cli.errors import MemoryStoreError
    from massgen_cli.memory.longterm.store.qdrant.base import require_version

    with pytest.raises(MemoryStoreError, match=r"runs 1\.15\.5; .* needs 1\.17 or later"):
        require_version(OldServer())


def _soaked(benchmark: Any) -> dict[str, Any]:
    try:
        return benchmark.soak(90, 3, 2)
    finally:
        close_clients()


def test_the_soak_on_the_in_process_engine_loses_nothing_and_leaves_no_orphan():
    """benchmarks/store_soak_qdrant.py, small: writers beside readers opening the store, the server cut
    right after one of mem0's writes (the write left half-done, its undo refused) and what failed written
    again; once the journal's entry is old enough, nothing is lost, doubled or left alone."""
    benchmark = load_script("benchmarks/store_soak_qdrant.py")
    figures = _soaked(benchmark)
    said = f"the soak's figures: {figures}"  # each failure shows them all
    assert figures["lines"] == 90 and figures["writers_failed"] == 0, said
    assert figures["requests_refused"] >= benchmark.CUT_REQUESTS and figures["writes_made_again"] > 0, said
    assert figures["lost"] == figures["doubled"] == figures["orphans"] == 0, said


def test_the_soak_loses_nothing_while_the_writer_of_the_cut_write_is_held_up(monkeypatch):
    """On a busy machine the writer whose write the cut followed may not run again for a while; the cut
    lasts until it does, and the other writers wait for the server to answer rather than give their
    lines up (they did: 51 of 90 lost, before they waited)."""
    benchmark = load_script("benchmarks/store_soak_qdrant.py")
    cut = benchmark.CuttableServer._maybe_cut

    def held_up(server: Any, name: str, args: Any, kwargs: Any) -> None:
        seen = server.writes_seen
        cut(server, name, args, kwargs)
        if server.writes_seen != seen and server.writes_seen == server.cut_after_write:
            server.lock.release()  # the others go on, and meet the cut many times over
            try:
                wait_until(lambda: server.refused >= 2000)
            finally:
                server.lock.acquire()

    monkeypatch.setattr(benchmark.CuttableServer, "_maybe_cut", held_up)
    figures = _soaked(benchmark)
    said = f"the soak's figures: {figures}"
    assert figures["writers_failed"] == figures["lost"] == figures["doubled"] == figures["orphans"] == 0, said

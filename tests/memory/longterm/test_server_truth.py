"""With a server store, the server is the whole truth of long-term memory and of sessions: two state
folders (two machines) sharing one real PostgreSQL see each other's memories, marks, values and
sessions, and deleting a state folder loses nothing."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import UsageError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.server.sessions import ServerSessions
from massgen_cli.session import open_session
from massgen_cli.session_copies import meet
from tests.cli.in_process_cli import massgen
from tests.conftest import write_config
from tests.memory.conftest import index_kept_in_the_folder
from tests.servers.postgres import free_port

pytestmark = pytest.mark.slow

FALCON_RUN = """
agents:
  - id: agent_a
    backend:
      type: scripted
      responses:
        - {{tool: new_answer, args: {{content: "The launch code for project Falcon is 7781."}}}}
        - {{tool: vote, args: {{agent_id: agent1, reason: "it states the code"}}}}
orchestrator:
  final_presentation: reuse
memory:
  enabled: true
  persistent_memory:
    enabled: true
    llm: {{provider: local}}
    embedding: {{provider: local}}
"""
"""One agent that records the Falcon code, with offline memory; a server store's lines complete it."""
CONFIG = (
    FALCON_RUN
    + """    vector_store: pgvector
    pgvector: {{connection_string: "{url}", collection_name: {collection}}}
"""
)


@pytest.fixture
def collection() -> str:
    return f"truth_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def config(tmp_path, pgvector_url, collection) -> str:
    return str(write_config(tmp_path, CONFIG.format(url=pgvector_url, collection=collection)))


def settings(url: str, collection: str) -> PersistentMemoryConfig:
    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "pgvector",
            "pgvector": {"connection_string": url, "collection_name": collection},
        }
    )


def test_a_second_machine_finds_lists_and_continues_what_the_first_recorded(tmp_path, config):
    first, second = tmp_path / "machine-a", tmp_path / "machine-b"
    answered = massgen(
        "-c", config, "--state-dir", str(first), "--session", "kbA", "What is the launch code?"
    )
    assert answered.exit_code == 0 and "7781" in answered.stdout, answered.stderr

    found = massgen("memory", "search", "Falcon launch code", "-c", config, "--state-dir", str(second))
    assert "launch code for project Falcon is 7781" in found.stdout, found.stderr
    listed = massgen("memory", "list", "--session", "kbA", "-c", config, "--state-dir", str(second), "--json")
    texts = [json.loads(line)["text"] for line in listed.stdout.splitlines()]
    assert "The launch code for project Falcon is 7781." in texts and "What is the launch code?" in texts

    shutil.rmtree(first)
    again = massgen("-c", config, "--state-dir", str(second), "--session", "kbA", "And the code again?")
    assert again.exit_code == 0, again.stderr
    shown = massgen("sessions", "show", "kbA", "--json", "--state-dir", str(second))
    record = json.loads(shown.stdout)
    assert record["turns_completed"] == 2
    assert [e["question"] for e in record["exchanges"]] == ["What is the launch code?", "And the code again?"]
    assert (second / "sessions" / "kbA" / "threads.json").is_file()

    listed = massgen(
        "memory", "list", "--session", "kbA", "-c", config, "--state-dir", str(tmp_path / "c"), "--json"
    )
    turns = {s["turn"] for line in listed.stdout.splitlines() for s in json.loads(line)["sources"]}
    assert turns == {1, 2}, "the first folder is gone and nothing is lost"

    deleted = massgen("sessions", "delete", "kbA", "--yes", "-c", config, "--state-dir", str(second))
    assert deleted.exit_code == 0 and "and its copy in the memory server" in deleted.stderr, deleted.stderr
    fresh = massgen("-c", config, "--state-dir", str(tmp_path / "d"), "--session", "kbA", "A new start?")
    assert fresh.exit_code == 0, fresh.stderr
    shown = massgen("sessions", "show", "kbA", "--json", "--state-dir", str(tmp_path / "d"))
    assert json.loads(shown.stdout)["turns_completed"] == 1, "deleted for every machine"


def test_a_new_machine_lists_and_shows_the_sessions_the_server_keeps(tmp_path, config):
    """`sessions list|show` read only the local folder: a new machine said "no sessions yet" while the
    server held them, and showed 1 turn where the server had 2."""
    first, second, fresh = tmp_path / "machine-a", tmp_path / "machine-b", tmp_path / "machine-c"
    asked = massgen("-c", config, "--state-dir", str(first), "--session", "kbA", "What is the launch code?")
    assert asked.exit_code == 0, asked.stderr
    again = massgen("-c", config, "--state-dir", str(second), "--session", "kbA", "And the code again?")
    assert again.exit_code == 0, again.stderr

    alone = massgen("sessions", "list", "--state-dir", str(fresh))
    assert "no sessions yet" in alone.stderr, "without a config a new folder knows no server"
    listed = massgen("sessions", "list", "-c", config, "--state-dir", str(fresh))
    assert listed.exit_code == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert line.startswith("kbA\tturns=2\t") and line.endswith("\tkept=server")

    shown = massgen("sessions", "show", "kbA", "--json", "-c", config, "--state-dir", str(fresh))
    questions = [exchange["question"] for exchange in json.loads(shown.stdout)["exchanges"]]
    assert questions == ["What is the launch code?", "And the code again?"]
    behind = massgen("sessions", "show", "kbA", "--json", "--state-dir", str(first))
    assert json.loads(behind.stdout)["turns_completed"] == 2, "the folder's own config names the server"
    assert massgen("sessions", "list", "--state-dir", str(first)).stdout.startswith("kbA\tturns=2\t")


def test_marks_values_winners_and_clear_reach_every_folder(tmp_path, pgvector_url, collection):
    one = PersistentMemory(
        settings(pgvector_url, collection), tmp_path / "a", domain="general", task_type="general"
    )
    two = PersistentMemory(
        settings(pgvector_url, collection), tmp_path / "b", domain="general", task_type="general"
    )
    try:
        one.record(
            [{"role": "assistant", "content": "Otter ridge opens at nine."}], RecordContext("agent_a", "s", 1)
        )
        two.record(
            [{"role": "assistant", "content": "Falcon harbour closes at six."}],
            RecordContext("agent_b", "s", 1),
        )
        otter = one.list_memories()[0] if "Otter" in one.list_memories()[0].text else one.list_memories()[1]

        one.record_winner("s", 1, "agent_a")
        hidden = SearchFilter(viewer=Viewer("agent_b", "s", 1))
        shown = SearchFilter(viewer=Viewer("agent_b", "s", 2))
        assert "Otter ridge opens at nine." not in {
            h.text for h in two.search("otter ridge", limit=5, scope=hidden)
        }
        assert "Otter ridge opens at nine." in {
            h.text for h in two.search("otter ridge", limit=5, scope=shown)
        }

        one.index.set_value(otter.id, "general", 0.9)
        assert two.index.values([otter.id], "general") == {otter.id: 0.9}

        assert one.index.mark_stale(
            StaleMark(otter.id, "closed for winter", "agent_a", session_id="s", turn=2)
        )
        assert not two.index.mark_stale(StaleMark(otter.id, "again", "agent_b")), (
            "the first mark stays, on every machine"
        )
        assert "Otter" not in " ".join(h.text for h in two.search("otter ridge", limit=5))
        assert two.index.stale_marks([otter.id])[otter.id].reason == "closed for winter"

        assert two.clear() == 2
        assert one.list_memories(include_stale=True) == []
    finally:
        one.close()
        two.close()


def test_identical_memories_written_from_two_folders_are_one_with_both_sources(
    tmp_path, pgvector_url, collection
):
    stores = [
        PersistentMemory(
            settings(pgvector_url, collection), tmp_path / name, domain="general", task_type="general"
        )
        for name in ("a", "b")
    ]
    try:
        for agent, store in zip(("agent_a", "agent_b"), stores, strict=True):
            store.record(
                [{"role": "user", "content": "The budget is forty thousand."}], RecordContext(agent, "s", 1)
            )
        [memory] = stores[0].list_memories()
        assert sorted(s.agent_id for s in memory.sources) == ["agent_a", "agent_b"]
    finally:
        for store in stores:
            store.close()


def test_a_session_held_on_one_machine_is_refused_on_another(tmp_path, pgvector_url, collection):
    first, second = ServerSessions(pgvector_url, collection), ServerSessions(pgvector_url, collection)
    session = open_session(tmp_path / "a", "shared", interactive=False, config_path=None, mirror=first)
    try:
        session.begin_turn()
        with pytest.raises(UsageError, match="in use by a massgen process on another machine"):
            open_session(tmp_path / "b", "shared", interactive=False, config_path=None, mirror=second)
    finally:
        session.close()
    continued = open_session(tmp_path / "b", "shared", interactive=False, config_path=None, mirror=second)
    try:
        assert continued.begin_turn() == 2
    finally:
        continued.close()
        first.close()
        second.close()


def test_names_from_the_server_never_leave_the_session_folder(tmp_path, pgvector_url, collection):
    sessions = ServerSessions(pgvector_url, collection)
    try:
        sessions.server.run(
            f"INSERT INTO {sessions.tables.sessions} VALUES ('evil', 9, NULL, %s, 'now')",
            (json.dumps({"../escape.json": "x", ".lock": "x", "a/b.json": "x", "threads.json": "{}"}),),
        )
        folder = tmp_path / "sessions" / "evil"
        assert meet(sessions, "evil", folder) == {}
        assert sorted(p.name for p in folder.iterdir()) == ["threads.json"]
        assert not (tmp_path / "sessions" / "escape.json").exists()
    finally:
        sessions.close()


def test_a_folder_that_kept_its_index_locally_uploads_it_once(tmp_path, pgvector_url, collection):
    """Earlier versions kept sources, values, marks and winners in the state folder beside a server
    table: the first open of the server store moves them there, and `memory migrate` says so."""
    otter, falcon = index_kept_in_the_folder(tmp_path)

    server = PersistentMemory(
        settings(pgvector_url, collection), tmp_path, domain="general", task_type="general"
    )
    try:
        assert server.migration is not None
        assert (server.migration.memories, server.migration.sources) == (2, 1)
        assert (server.migration.values, server.migration.winners, server.migration.stale) == (1, 1, 1)
        [moved] = server.list_memories()
        assert moved.text == otter.text and [s.agent_id for s in moved.sources] == ["agent_a", "agent_b"]
        assert server.index.values([otter.id], "general") == {otter.id: 0.8}
        assert server.index.stale_marks([falcon.id])[falcon.id].reason == "moved"
        seen = SearchFilter(viewer=Viewer("agent_a", "s", 2))
        assert "Falcon harbour" not in " ".join(
            h.text for h in server.search("falcon harbour", limit=5, scope=seen)
        )
    finally:
        server.close()
    config = write_config(tmp_path, CONFIG.format(url=pgvector_url, collection=collection), "server.yaml")
    again = massgen("memory", "migrate", "-c", str(config), "--state-dir", str(tmp_path))
    assert again.exit_code == 0 and again.stdout.startswith("nothing to move"), again.stdout
    forced = massgen("memory", "migrate", "--again", "-c", str(config), "--state-dir", str(tmp_path))
    assert "moved 0 memories (2 the server knew already), 0 sources" in forced.stdout, forced.stdout


def test_an_unreachable_server_is_said_plainly_and_the_turn_goes_on(tmp_path):
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/massgen"
    config = write_config(tmp_path, CONFIG.format(url=url, collection="unreachable"))
    run = massgen(
        "-c", str(config), "--state-dir", str(tmp_path / "state"), "--session", "kb", "Launch code?"
    )
    assert run.exit_code == 0 and "7781" in run.stdout, run.stderr
    assert run.stderr.count("could not use the PostgreSQL memory store at 127.0.0.1") == 1, run.stderr
    assert "long-term memory is off for this run" in run.stderr
    assert "the memory server cannot be reached. Session kb goes on in" in run.stderr
    spooled = (tmp_path / "state" / "memory" / "spool.jsonl").read_text().splitlines()
    assert any("Launch code?" in line for line in spooled), "what could not be written waits"


def test_a_new_machine_deletes_a_session_only_the_server_keeps_unless_one_holds_it(
    tmp_path, config, pgvector_url, collection
):
    asked = massgen("-c", config, "--state-dir", str(tmp_path / "a"), "--session", "kbA", "Launch code?")
    assert asked.exit_code == 0, asked.stderr
    fresh = str(tmp_path / "fresh")
    holder = ServerSessions(pgvector_url, collection)
    try:
        holder.claim("kbA")
        refused = massgen("sessions", "delete", "kbA", "--yes", "-c", config, "--state-dir", fresh)
        assert refused.exit_code == 2 and "in use by a massgen process on another machine" in refused.stderr
    finally:
        holder.close()
    assert "kbA\tturns=1" in massgen("sessions", "list", "-c", config, "--state-dir", fresh).stdout

    deleted = massgen("sessions", "delete", "kbA", "--yes", "-c", config, "--state-dir", fresh)
    assert deleted.exit_code == 0 and "and its copy in the memory server" in deleted.stderr, deleted.stderr
    assert massgen("sessions", "list", "-c", config, "--state-dir", fresh).stdout == ""
    unknown = massgen("sessions", "delete", "kbA", "--yes", "-c", config, "--state-dir", fresh)
    assert (
        unknown.exit_code == 2
        and "no session kbA" in unknown.stderr
        and "or on the memory server" in unknown.stderr
    )

"""Long-term memory on a real PostgreSQL + pgvector server, shared by several processes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import uuid

import psycopg
import pytest
from psycopg import sql

from massgen_cli.config.memory import PersistentMemoryConfig, PgvectorConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import pgvector_config
from tests.conftest import run_cli
from tests.script_module import load_script
from tests.servers.postgres import free_port

pytestmark = pytest.mark.slow

MASSGEN = (sys.executable, "-m", "massgen_cli")
EXAMPLE = "@examples/pgvector_memory"
WRITERS = 4
DISTINCT_PER_WRITER = 25
TURNS = 5
SHARED = (
    "Every agent agrees that the launch window opens on Thursday at dawn.",
    "The shared budget for the observatory is forty thousand credits.",
    "All teams must file their reports in the archive before midnight.",
)
WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.record.memories import RecordContext

    agent, url, collection, state = sys.argv[1:5]
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "pgvector",
         "pgvector": {"connection_string": url, "collection_name": collection}}
    )
    store = PersistentMemory(settings, Path(state), domain="general", task_type="general")
    store.mem0
    print("ready", flush=True)
    for text, turn in json.loads(sys.stdin.readline()):
        # The user's words, which every agent records alike (an agent's own words are its own memory).
        store.record([{"role": "user", "content": text}], RecordContext(agent, "s", turn))
    store.close()
    """
)


def settings_for(url: str, collection: str) -> PersistentMemoryConfig:
    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "pgvector",
            "pgvector": {"connection_string": url, "collection_name": collection},
        }
    )


def stored_ids(url: str, collection: str) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(sql.SQL("SELECT id::text FROM {}").format(sql.Identifier(collection)))
        return {row[0] for row in rows}


def create_database(url: str, name: str) -> str:
    """A new database on the same server, without the test database's settings."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def collection() -> str:
    return f"memories_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(tmp_path, pgvector_url, collection):  # type: ignore[no-untyped-def]
    memory = PersistentMemory(
        settings_for(pgvector_url, collection), tmp_path, domain="general", task_type="general"
    )
    yield memory
    memory.close()


def test_records_are_rows_and_retrieval_is_turn_aware(store, pgvector_url, collection):
    first = store.record(
        [{"role": "user", "content": "The  secret code is 7781."}], RecordContext("a", "s", 1)
    )
    again = store.record(
        [{"role": "user", "content": "the secret code is 7781."}], RecordContext("b", "s", 2)
    )
    assert len(first.added) == 1 and again.existing == first.added
    for agent, turn, text in (
        ("a", 1, "Winner fact: the bridge opens at noon."),
        ("b", 1, "Loser fact: the bridge is closed forever."),
        ("a", 2, "Current fact: the bridge opens at dawn."),
    ):
        # The user's words, which every agent records alike (an agent's own words are its own memory).
        store.record([{"role": "user", "content": text}], RecordContext(agent, "s", turn))
    store.record_winner("s", 1, "a")
    assert stored_ids(pgvector_url, collection) == {m.id for m in store.list_memories()}
    assert len(store.list_memories()) == 4

    [nearest] = store.search("when does the bridge open at noon", limit=1, method="dense")
    assert nearest.text == "Winner fact: the bridge opens at noon."
    seen = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("c", "s", 2))
        )
    }
    assert seen == {"Winner fact: the bridge opens at noon.", "The  secret code is 7781."}, "via a's turn 1"
    own = {
        hit.text
        for hit in store.search(
            "when does the bridge open", limit=10, scope=SearchFilter(viewer=Viewer("b", "s", 2))
        )
    }
    assert "Loser fact: the bridge is closed forever." in own
    assert store.search("bridge", limit=10, scope=SearchFilter(viewer=Viewer("c", "t", 5))) == []

    assert store.clear() == 4
    assert stored_ids(pgvector_url, collection) == set()


def writer_records(agent: str) -> list[tuple[str, int]]:
    """Each writer's distinct memories (turns 1-5) around the contents all writers record at turn 1."""
    pick = random.Random(agent).choice
    distinct = [
        (
            f"{agent} log {j}: the {pick(['red', 'blue', 'green', 'amber'])} "
            f"{pick(['falcon', 'otter', 'lynx', 'heron'])} reached the "
            f"{pick(['harbour', 'ridge', 'mill', 'tower'])} after {j + 2} hours.",
            j % TURNS + 1,
        )
        for j in range(DISTINCT_PER_WRITER)
    ]
    shared = [(text, 1) for text in SHARED]
    return shared[:2] + distinct + shared[2:]


def test_four_processes_writing_at_once_lose_nothing(tmp_path, pgvector_url, collection):
    """Four writers, each with its own state folder (as on four machines), one server."""
    state = tmp_path / "reader-state"
    agents = [f"w{i}" for i in range(WRITERS)]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, agent, pgvector_url, collection, str(tmp_path / f"state-{agent}")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        for agent in agents
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        for agent, writer in zip(agents, writers, strict=True):  # all ready first: the writes overlap
            assert writer.stdin is not None
            writer.stdin.write(json.dumps(writer_records(agent)) + "\n")
            writer.stdin.flush()
        results = [writer.communicate(timeout=90) for writer in writers]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
    assert [w.returncode for w in writers] == [0] * WRITERS, [err[-2000:] for _, err in results]

    store = PersistentMemory(
        settings_for(pgvector_url, collection), state, domain="general", task_type="general"
    )
    try:
        memories = {memory.text: memory for memory in store.list_memories()}
        expected = {text for agent in agents for text, _ in writer_records(agent)}
        assert set(memories) == expected and len(expected) == WRITERS * DISTINCT_PER_WRITER + len(SHARED)
        for text in SHARED:
            assert sorted(s.agent_id for s in memories[text].sources) == agents, text
        assert stored_ids(pgvector_url, collection) == {m.id for m in memories.values()}, "orphan rows"

        store.record_winner("s", 1, "w1")
        store.record_winner("s", 2, "w2")
        viewer = Viewer("w0", "s", 3)
        seen = SearchFilter(viewer=viewer)
        for query in ("falcon harbour hours", "otter ridge", "launch window", "w3 log 5", "w1 log 10"):
            for hit in store.search(query, limit=40, scope=seen):
                source = hit.source
                assert source.agent_id == "w0" or source.turn < viewer.turn, (query, hit.text, source)
        found = {h.text for h in store.search("w1 log 0 reached after 2 hours", limit=40, scope=seen)}
        assert writer_records("w1")[2][0] in found, "turn 1's winner is visible"
        assert writer_records("w0")[6][0] in {
            h.text for h in store.search("w0 log 4 reached after 6 hours", limit=40, scope=seen)
        }, "a viewer's own turn-5 record is visible"
        loser = {h.text for h in store.search("w3 log 0 reached after 2 hours", limit=40, scope=seen)}
        assert writer_records("w3")[2][0] not in loser, "turn 1's loser stays hidden"
    finally:
        store.close()


def test_two_cli_runs_at_once_share_the_store(tmp_path, pgvector_url, monkeypatch):
    monkeypatch.setenv("MASSGEN_PGVECTOR_URL", pgvector_url)
    state = str(tmp_path / "shared-state")
    questions = {"one": "What is the launch code?", "two": "What is Falcon's budget?"}
    command = [*MASSGEN, "-c", EXAMPLE, "--state-dir", state]
    runs = [
        subprocess.Popen(
            [*command, "--session", session, "-q", question],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        for session, question in questions.items()
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for _, err in outputs]
    assert all("7781" in out for out, _ in outputs)

    listing = run_cli("memory", "list", "-c", EXAMPLE, "--state-dir", state, "--json")
    assert listing.returncode == 0, listing.stderr
    sessions = {
        record["text"]: {s["session_id"] for s in record["sources"]}
        for record in map(json.loads, listing.stdout.splitlines())
    }
    for session, question in questions.items():
        assert sessions[question] == {session}
    for answer in ("The launch code for project Falcon is 7781.", "Falcon's budget is 3 million."):
        assert sessions[answer] == {"one", "two"}, answer
    found = run_cli("memory", "search", "Falcon budget", "-c", EXAMPLE, "--state-dir", state)
    assert "Falcon's budget is 3 million." in found.stdout


def test_every_connection_turns_on_iterative_index_scans(pgvector_url, collection):
    bare = create_database(pgvector_url, f"bare_{uuid.uuid4().hex[:8]}")
    own_options = bare + "?options=-c%20statement_timeout%3D4321"
    settings = PgvectorConfig(connection_string=own_options, collection_name=collection)
    conninfo = pgvector_config(settings, 8)["config"]["connection_string"]
    rows = [
        (str(uuid.uuid4()), str([random.random() for _ in range(8)]), json.dumps({"kind": i % 3}))
        for i in range(3000)
    ]
    table = sql.Identifier(collection)
    with psycopg.connect(conninfo) as connection:
        assert connection.execute("SHOW hnsw.iterative_scan").fetchone() == ("relaxed_order",)
        assert connection.execute("SHOW statement_timeout").fetchone() == ("4321ms",)
        connection.cursor().executemany(
            sql.SQL("INSERT INTO {} (id, vector, payload) VALUES (%s, %s, %s)").format(table), rows
        )
        connection.execute("SET enable_seqscan = off")  # the HNSW index, as on a large table
        query = sql.SQL(
            "SELECT count(*) FROM (SELECT id FROM {} WHERE payload->>'kind' = '1' "
            "ORDER BY vector <=> %s::vector LIMIT 400) found"
        ).format(table)
        assert connection.execute(query, (str([0.5] * 8),)).fetchone() == (400,)


def test_a_collection_of_another_size_is_a_clear_error(pgvector_url, collection):
    pgvector_config(PgvectorConfig(connection_string=pgvector_url, collection_name=collection), 384)
    with pytest.raises(MemoryStoreError, match="holds 384-dimension vectors but the embedder makes 1536"):
        pgvector_config(PgvectorConfig(connection_string=pgvector_url, collection_name=collection), 1536)


def test_an_unreachable_server_is_a_clear_error(tmp_path):
    """The server holds the whole index, so the store refuses to open without it (a run goes on without
    long-term memory, and says so)."""
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/massgen"
    with pytest.raises(MemoryStoreError, match=r"could not use the PostgreSQL memory store at 127\.0\.0\.1"):
        PersistentMemory(settings_for(url, "memories"), tmp_path, domain="general", task_type="general")


def test_the_concurrent_writes_benchmark_loses_nothing(pgvector_url):
    """benchmarks/pgvector_writes.py, small: the figures it prints come from a run that checks every write,
    and content every process wrote is one memory with a source per process."""
    benchmark = load_script("benchmarks/pgvector_writes.py")
    figures = benchmark.concurrent_writes(pgvector_url, 60, 2)  # four writers: the test above
    # 30 records per process, 3 of them the same content in both: 2 * 27 + 3 memories.
    assert figures["writes"] == 60 and figures["identical_writes"] == 6 and figures["sources"] == 60
    assert figures["memories"] == figures["rows"] == figures["indexed"] == 57
    assert figures["writes_lost"] == 0 and figures["doubled"] == 0


def test_the_soak_benchmark_loses_nothing_and_leaves_no_orphan(pgvector_url):
    """benchmarks/store_soak.py, small: importers beside readers opening the store, one importer killed
    with SIGKILL halfway and imported again; nothing lost, doubled or left in mem0's table alone."""
    benchmark = load_script("benchmarks/store_soak.py")
    figures = benchmark.soak(pgvector_url, 120, 3, 2)
    assert figures["lines"] == 121 and figures["importers_failed"] == 0 and figures["reader_failures"] == 0
    assert figures["lost"] == figures["doubled"] == figures["orphan_rows"] == 0

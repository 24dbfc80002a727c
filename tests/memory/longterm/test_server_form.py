"""The server index's tables as its searches read them: each memory's vector in its row, the terms'
key holding their counts, the store's statistics kept as memories come and go. A store an earlier
version made is reshaped once when opened and ranks as before; the statistics stay exact while
several connections write and forget at once."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import psycopg
import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext, Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.contract import KeyTaken
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.server.index import ServerIndex
from massgen_cli.memory.longterm.store.server.reshape import SERVER_FORM
from massgen_cli.memory.longterm.store.vector_stores import close_clients

pytestmark = pytest.mark.slow

SAID = [
    "The launch code for project Falcon is 7781.",
    "Project Heron ships on the first of March.",
    "The budget for Falcon is forty thousand euros.",
    "Maria prefers tea to coffee in the mornings.",
    "The staging database lives on host db-02.",
]
QUESTIONS = ["What is the Falcon launch code?", "When does Heron ship?", "What does Maria drink?"]


@pytest.fixture
def collection() -> str:
    return f"form_{uuid.uuid4().hex[:10]}"


def run(url: str, sql: str, *params: Any) -> list[Any]:
    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(sql, params or None)
        return cursor.fetchall() if cursor.description else []


def open_store(url: str, collection: str, folder: Any) -> PersistentMemory:
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "pgvector",
         "pgvector": {"connection_string": url, "collection_name": collection}}
    )  # fmt: skip
    return PersistentMemory(settings, folder, domain="general", task_type="general")


def rankings(store: PersistentMemory) -> list[list[tuple[str, float]]]:
    scopes = [SearchFilter(), SearchFilter(session_id="s1")]
    return [
        [(hit.memory.key, hit.score) for hit in store.search(question, limit=5, scope=scope, method=method)]
        for question in QUESTIONS
        for scope in scopes
        for method in ("hybrid", "dense", "lexical")
    ]


def make_earlier_form(url: str, collection: str) -> None:
    """The tables as the version before kept them: vectors in ``<collection>_vectors``, a terms key
    without counts, no statistics, no form mark."""
    table = f'"{collection}_index"'
    run(url, f'CREATE TABLE "{collection}_vectors" (id text PRIMARY KEY REFERENCES {table}(id) '
             "ON DELETE CASCADE, vector vector NOT NULL)")  # fmt: skip
    run(url, f'INSERT INTO "{collection}_vectors" SELECT id, vector FROM {table} WHERE vector IS NOT NULL')
    run(url, f"ALTER TABLE {table} DROP COLUMN vector")
    run(url, f'DROP TRIGGER "{collection}_counted" ON {table}')
    run(url, f'DROP FUNCTION "{collection}_count"()')
    run(url, f'DROP TABLE "{collection}_statistics"')
    run(url, f'ALTER TABLE "{collection}_terms" DROP CONSTRAINT "{collection}_terms_pkey", '
             "ADD PRIMARY KEY (term, memory_id)")  # fmt: skip
    run(url, f"DELETE FROM \"{collection}_meta\" WHERE name = 'server_form'")


def statistics(url: str, collection: str) -> tuple[int, int]:
    [(memories, length)] = run(
        url, f'SELECT coalesce(sum(memories), 0), coalesce(sum(length), 0) FROM "{collection}_statistics"'
    )
    return int(memories), int(length)


def counted(url: str, collection: str) -> tuple[int, int]:
    [(memories, length)] = run(url, f'SELECT count(*), coalesce(sum(length), 0) FROM "{collection}_index"')
    return int(memories), int(length)


def test_a_store_of_the_earlier_form_is_reshaped_once_and_ranks_as_before(tmp_path, pgvector_url, collection):
    store = open_store(pgvector_url, collection, tmp_path / "a")
    for turn, text in enumerate(SAID, start=1):
        store.record([{"role": "user", "content": text}], RecordContext("agent_a", "s1", turn))
    before = rankings(store)
    store.close()
    make_earlier_form(pgvector_url, collection)
    assert run(pgvector_url, "SELECT to_regclass(%s) IS NOT NULL", f'"{collection}_vectors"') == [(True,)]

    reopened = open_store(pgvector_url, collection, tmp_path / "b")
    try:
        assert rankings(reopened) == before
        assert any(ranking for ranking in before)
    finally:
        reopened.close()
        close_clients()
    assert run(pgvector_url, "SELECT to_regclass(%s) IS NULL", f'"{collection}_vectors"') == [(True,)]
    assert statistics(pgvector_url, collection) == counted(pgvector_url, collection)
    assert counted(pgvector_url, collection)[0] == len(SAID)
    [(covering,)] = run(
        pgvector_url,
        "SELECT indnkeyatts < indnatts FROM pg_index WHERE indexrelid = to_regclass(%s)",
        f'"{collection}_terms_pkey"',
    )
    assert covering
    marks = run(pgvector_url, f"SELECT value FROM \"{collection}_meta\" WHERE name = 'server_form'")
    assert marks == [(SERVER_FORM,)]


def test_the_store_statistics_follow_writes_and_deletes_from_several_connections(pgvector_url, collection):
    indexes = [ServerIndex(pgvector_url, collection) for _ in range(3)]
    fields = {"domain": "general", "task_type": "general", "role": "user"}
    taken: list[str] = []

    def write(number: int, index: ServerIndex) -> None:
        for item in range(20):
            memory_id = f"m{number}-{item}"
            words = " ".join(["word"] * (item % 5 + 1))  # lengths differ from memory to memory
            try:  # every writer also tries two contents every other writer writes
                key = f"k-shared-{item}" if item < 2 else f"k-{number}-{item}"
                index.add(
                    memory_id, key, f"{words} {number} {item}", fields, Source("a", "s", 1, 1), [1.0, 0.0]
                )
            except KeyTaken:
                taken.append(memory_id)

    writers = [
        threading.Thread(target=write, args=(number, indexes[number % len(indexes)])) for number in range(6)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    try:
        assert len(taken) == 5 * 2  # the two shared contents were stored once each
        assert statistics(pgvector_url, collection) == counted(pgvector_url, collection)
        assert counted(pgvector_url, collection)[0] == 6 * 20 - len(taken)
        indexes[1].delete([f"m{number}-{item}" for number in range(6) for item in range(5, 12)])
        indexes[2].server.run(
            f'UPDATE "{collection}_index" SET length = length + 3 WHERE id LIKE %s', ("m0-%",)
        )
        assert statistics(pgvector_url, collection) == counted(pgvector_url, collection)
        assert counted(pgvector_url, collection)[0] == 6 * 20 - len(taken) - 6 * 7
    finally:
        for index in indexes:
            index.close()

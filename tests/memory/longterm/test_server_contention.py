"""The shared store beside other processes' writes, on a real PostgreSQL: opening a current store takes
no lock a writer holds, a write the server aborts for another's sake is tried again, and a write that
fails leaves nothing of itself in mem0's table."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from psycopg import sql

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.contention import StoreContention, retried
from massgen_cli.memory.longterm.store.server.base import open_tables
from massgen_cli.memory.longterm.store.server.connection import ServerConnection
from massgen_cli.memory.longterm.store.writing import MemoryWriter
from tests.memory.longterm.test_pgvector import collection, store, stored_ids  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow


def _waiting_on_a_lock(url: str, pid: int) -> bool:
    with psycopg.connect(url) as watcher:
        row = watcher.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()
        return row is not None and row[0] == "Lock"


def test_opening_a_current_store_beside_a_writer_takes_no_lock_it_holds(pgvector_url, collection):  # noqa: F811
    """Every open ran the schema's ``CREATE INDEX IF NOT EXISTS``, which waits for a writer's table lock
    and deadlocked with an importer's batch (the writer was aborted)."""
    tables, first = open_tables(pgvector_url, collection)
    first.close()
    with psycopg.connect(pgvector_url) as writer:  # a writer's batch, open: its tables row-locked
        for part in ("index", "sources", "terms", "names"):
            writer.execute(f"LOCK TABLE {getattr(tables, part)} IN ROW EXCLUSIVE MODE")
        opened: list[ServerConnection] = []
        opener_pid: list[int] = []

        class Watched(ServerConnection):
            def _open(self):  # type: ignore[no-untyped-def]
                connection = super()._open()
                opener_pid[:] = [connection.info.backend_pid]
                return connection

        def open_store() -> None:
            from massgen_cli.memory.longterm.store.server import base

            server = Watched(pgvector_url)
            base.create_tables(server, tables)
            opened.append(server)

        opening = threading.Thread(target=open_store)
        opening.start()
        blocked = False
        while opening.is_alive() and not blocked:  # finished, or waiting on the writer's lock
            opening.join(0.05)
            blocked = bool(opener_pid) and _waiting_on_a_lock(pgvector_url, opener_pid[0])
        writer.rollback()
    opening.join()
    opened[0].close()
    assert not blocked, "opening a current store waited for a writer's table lock"


def _deadlocking_transfer(
    url: str, table: str, rows: tuple[int, int], both_hold: threading.Barrier, attempts: int
) -> int | StoreContention:
    """Update one row then the other in one transaction; the first try waits until the other transfer
    holds its first row too (so the two deadlock); how many tries it took, or the error it ended in."""
    server = ServerConnection(url)
    tries = 0

    def transfer() -> None:
        nonlocal tries
        tries += 1
        with server.transaction():
            server.run(f"UPDATE {table} SET n = n + 1 WHERE id = %s", (rows[0],))
            if tries == 1:
                both_hold.wait()
            server.run(f"UPDATE {table} SET n = n + 1 WHERE id = %s", (rows[1],))

    try:
        retried(transfer, attempts)
    except StoreContention as error:
        return error
    finally:
        server.close()
    return tries


def _transfer_both_ways(url: str, attempts: int) -> tuple[list[int | StoreContention], int]:
    """Two transfers that deadlock, each tried at most ``attempts`` times: what each ended in, and the
    rows' total afterwards."""
    table = f'"contention_{uuid.uuid4().hex[:8]}"'
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, n int NOT NULL)")
        setup.execute(f"INSERT INTO {table} VALUES (1, 0), (2, 0)")
    both_hold = threading.Barrier(2)
    ended: list[int | StoreContention] = []
    transfers = [
        threading.Thread(
            target=lambda rows=rows: ended.append(
                _deadlocking_transfer(url, table, rows, both_hold, attempts)
            )
        )
        for rows in ((1, 2), (2, 1))
    ]
    for transfer in transfers:
        transfer.start()
    for transfer in transfers:
        transfer.join()
    with psycopg.connect(url) as check:
        total = check.execute(f"SELECT sum(n) FROM {table}").fetchone()
    return ended, int(total[0]) if total else 0


def test_a_deadlocked_write_is_tried_again_whole(pgvector_url):
    ended, total = _transfer_both_ways(pgvector_url, attempts=6)
    assert sorted(ended) == [1, 2], "the server aborted one of the two, which was tried again"  # type: ignore[type-var]
    assert total == 4, "both transfers whole"


def test_a_deadlock_says_so_rather_than_that_the_server_may_be_down(pgvector_url):
    ended, total = _transfer_both_ways(pgvector_url, attempts=1)
    [error] = [end for end in ended if isinstance(end, StoreContention)]
    assert "deadlock detected" in str(error) and "nothing of it was kept" in str(error)
    assert "check that the server runs" not in str(error).casefold()
    assert total == 2, "the aborted transfer changed nothing"


def _lines(count: int, tag: str) -> list[tuple[dict[str, object], RecordContext]]:
    return [
        (
            {"role": "user", "content": f"{tag} line {n}: the heron reached tower {n}."},
            RecordContext("a", "s", 1),
        )
        for n in range(count)
    ]


def test_a_batch_the_server_aborts_is_tried_again_whole(store, pgvector_url, collection, monkeypatch):  # noqa: F811
    index_new = MemoryWriter.index_new
    aborted: list[int] = []

    def aborted_once(self, memory_id, draft, context, outcome, vector):  # type: ignore[no-untyped-def]
        if not aborted:
            aborted.append(1)
            raise StoreContention("deadlock detected (as the server says it)")
        return index_new(self, memory_id, draft, context, outcome, vector)

    monkeypatch.setattr(MemoryWriter, "index_new", aborted_once)
    outcomes = store.record_many(_lines(20, "retried"))
    assert aborted and sum(len(o.added) for o in outcomes) == 20
    assert stored_ids(pgvector_url, collection) == {m.id for m in store.list_memories()}
    assert len(store.list_memories()) == 20 and store.index.pending() == []


def test_a_batch_that_fails_leaves_no_point_of_itself_behind(store, pgvector_url, collection, monkeypatch):  # noqa: F811
    """An aborted batch left its 512 points in mem0's table with no journal entry: a re-import added
    its memories again beside them, and search and list hid them."""
    index_new = MemoryWriter.index_new
    seen: list[str] = []

    def fails_midway(self, memory_id, draft, context, outcome, vector):  # type: ignore[no-untyped-def]
        seen.append(memory_id)
        if len(seen) == 12:
            raise psycopg.OperationalError("the server went away")
        return index_new(self, memory_id, draft, context, outcome, vector)

    monkeypatch.setattr(MemoryWriter, "index_new", fails_midway)
    with pytest.raises(MemoryStoreError, match="the server went away"):
        store.record_many(_lines(20, "failed"))
    assert len(seen) == 12, "the points were written before the index's rows"
    with psycopg.connect(pgvector_url) as check:
        journal = sql.Identifier(f"{collection}_pending")
        assert check.execute(sql.SQL("SELECT count(*) FROM {}").format(journal)).fetchone() == (0,)
    assert stored_ids(pgvector_url, collection) == set() and store.list_memories() == []
    monkeypatch.setattr(MemoryWriter, "index_new", index_new)
    store.record_many(_lines(20, "failed"))
    assert len(stored_ids(pgvector_url, collection)) == 20 == len(store.list_memories())


def test_two_processes_finishing_the_same_dead_write_do_not_fail(store, pgvector_url, collection):  # noqa: F811
    """Two processes that open the store at once both find a dead writer's points; the second to delete
    one found it gone, and its open failed ("Memory with id … not found"), killing an importer."""
    from massgen_cli.memory.longterm.store.bulk import VerbatimRecord
    from massgen_cli.memory.longterm.store.journal import WRITE_TOKEN, discard_unindexed

    token = uuid.uuid4().hex
    memory = store.mem0
    texts = [f"a dead writer's line {n}" for n in range(3)]
    vectors = store.embedding.embed(texts)
    pairs = zip(texts, vectors, strict=True)
    store.writer.mem0.add_verbatim(
        [VerbatimRecord(text, "user", {WRITE_TOKEN: token}, vector) for text, vector in pairs]
    )
    assert len(stored_ids(pgvector_url, collection)) == 3

    class SeenBeforeTheOther:
        """mem0 as the second process saw it: listed before the first deleted anything."""

        listing = memory.get_all(filters={"user_id": "massgen", WRITE_TOKEN: token}, top_k=1000)
        calls = 0

        def get_all(self, **query):  # type: ignore[no-untyped-def]
            self.calls += 1
            return self.listing if self.calls == 1 else memory.get_all(**query)

        def delete(self, memory_id: str) -> None:
            memory.delete(memory_id)

    discard_unindexed(store.index, memory, token)  # the first process
    assert stored_ids(pgvector_url, collection) == set()
    discard_unindexed(store.index, SeenBeforeTheOther(), token)  # the second, on what it listed before

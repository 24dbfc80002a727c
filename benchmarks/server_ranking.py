"""Ranking latency side by side: the local memory index (SQLite + FTS5 + an in-memory matrix) and the
server index (PostgreSQL + pgvector, one SQL statement), filled with the same memories, asked the same
questions in the same scopes, one search on each in turn.

Each size gets a local store and a server store holding the same chatter memories (random unit vectors;
searches read only the index, so nothing is embedded but the questions), spread over 10 sessions of
three agents with a winner for every turn. Every question is searched, hybrid, in three scopes: a
session (what ``massgen memory search --session`` asks), a turn-aware viewer (what an agent's step
asks: its own memories and earlier turns' winners in its session) and the whole store. Half the
questions share words with the chatter (each such word is in about a twelfth of the memories), half
share none. Each question is embedded once, timed on its own, before its searches: the figures are the
ranking's (``store.search`` with the question's vector made), the embedding a figure of its own that
a search adds on either index. The p50 is taken over every search of a store, and per scope.

The local store is filled through ``index.add``, with SQLite's synchronous writes off while it fills
(the benchmark's PostgreSQL runs without fsync too); the server store by ``COPY`` into the index's
tables (row by row, 50,000 memories take minutes), then ``VACUUM (ANALYZE)``, as autovacuum would after
such a load. ``--explain`` prints the server's plan (EXPLAIN ANALYZE) of one ranking statement per scope.

Usage: python benchmarks/server_ranking.py [--sizes 1000 10000 50000] [--queries 60] [--explain]
                                            [--url postgresql://...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for path in (str(HERE), str(HERE.parent)):
    if path not in sys.path:
        sys.path.insert(0, path)
os.environ.setdefault("MEM0_TELEMETRY", "False")
# OpenBLAS's idle threads spin on the cores after each product the local index makes; measured in one
# process, the server search that follows a local one waited for them (10k memories on 2 busy cores:
# server p50 41 ms with them, 27 ms without; local 77 and 45 ms). One BLAS thread, set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from synthetic_conversations import (  # noqa: E402
    build_conversation,
    fill_index,
    filler_memories,
    filler_winners,
)

from massgen_cli.config.memory import PersistentMemoryConfig  # noqa: E402
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter  # noqa: E402
from massgen_cli.memory.longterm.retrieve.visibility import Viewer  # noqa: E402
from massgen_cli.memory.longterm.store.persistent import PersistentMemory  # noqa: E402
from massgen_cli.memory.longterm.store.vector_stores import close_clients  # noqa: E402

SERVER_SETTINGS = ("-c shared_buffers=512MB",)
"""The PostgreSQL this benchmark starts holds the 50,000 memories' tables (about 210 MB with their
indexes) in its buffers, as a server configured for its data would (PostgreSQL's default, 128 MB, is
the first setting every guide raises); with the default, each search of the largest store copies
pages in from the operating system's cache."""
SESSIONS = 10
AGENTS = ("agent_a", "agent_b", "agent_c")
SEED = 3
LIMIT = 5
"""Results per search (an agent's default ``retrieval.limit``)."""
SCOPES = ("session", "viewer", "store")
CHATTER_QUESTIONS = [
    "Did the meeting run late again?",
    "Where is the good coffee downstairs?",
    "Was the crowded train on time?",
    "Which documentary about creatures did you watch?",
    "When is the team outing planned?",
    "Why is the phone battery draining?",
    "Who forgot an umbrella and got soaked?",
    "What novel about sailors are you reading?",
    "How long will the construction noise last?",
    "What was for lunch, salad and bread?",
]
"""Questions whose words are in the chatter (each chatter line is a twelfth of the memories)."""


def questions() -> list[str]:
    """Chatter questions and the synthetic set's fact questions (whose words the chatter lacks), in turn."""
    facts = [probe.question for probe in build_conversation(40, 12).probes]
    mixed: list[str] = []
    for number in range(max(len(facts), len(CHATTER_QUESTIONS))):
        mixed += [CHATTER_QUESTIONS[number % len(CHATTER_QUESTIONS)], facts[number % len(facts)]]
    return mixed


def scope_of(kind: str, number: int, size: int) -> SearchFilter:
    """The ``kind`` scope of question ``number``: a session, an agent in the middle turn of a session,
    or the whole store."""
    session = f"filler_{number % SESSIONS}"
    if kind == "session":
        return SearchFilter(session_id=session)
    if kind == "viewer":
        turns = max(1, size // (SESSIONS * len(AGENTS)))
        return SearchFilter(viewer=Viewer(AGENTS[number % len(AGENTS)], session, turns // 2 + 1))
    return SearchFilter()


def open_store(folder: Path, settings: PersistentMemoryConfig | None = None) -> PersistentMemory:
    return PersistentMemory(
        settings or PersistentMemoryConfig(enabled=True), folder, domain="bench", task_type="recall"
    )


def server_settings(url: str, collection: str) -> PersistentMemoryConfig:
    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "pgvector",
            "pgvector": {"connection_string": url, "collection_name": collection},
        }
    )


def fill_local(store: PersistentMemory, size: int) -> None:
    """``fill_index`` with SQLite's synchronous writes off while it runs (each add commits)."""
    database = store.index._db  # type: ignore[attr-defined]
    before = database.execute("PRAGMA synchronous").fetchone()[0]
    database.execute("PRAGMA synchronous = OFF")
    try:
        fill_index(store, size, SESSIONS, SEED, AGENTS)
    finally:
        database.execute(f"PRAGMA synchronous = {int(before)}")


def fill_server(store: PersistentMemory, size: int) -> None:
    """The memories and winners of ``fill_index`` (same ids, keys, texts, sources, vectors and terms)
    copied into the server index's tables as ``index.add`` and ``record_winner`` write them, then
    ``VACUUM (ANALYZE)``."""
    from massgen_cli.memory.longterm.record.names import memory_names
    from massgen_cli.memory.longterm.store.index.schema import now_iso
    from massgen_cli.memory.longterm.store.index.terms import memory_terms
    from massgen_cli.memory.longterm.store.vectors import vector_text

    index: Any = store.index
    tables, created = index.tables, now_iso()
    fillers = list(filler_memories(size, SESSIONS, SEED, AGENTS))
    lexical = {filler.memory_id: memory_terms(filler.text, filler.text) for filler in fillers}
    memory_columns = "id, key, text, domain, task_type, role, created_at, extra, indexed, length, vector"
    source_columns = "memory_id, agent_id, session_id, turn, attempt, recorded_at"
    with index.server.transaction(), index.server.cursor() as cursor:
        with cursor.copy(f"COPY {tables.index} ({memory_columns}) FROM STDIN") as copy:
            for filler in fillers:
                copy.write_row(
                    (filler.memory_id, filler.key, filler.text, store.domain, store.task_type, "user",
                     created, "{}", filler.text, len(lexical[filler.memory_id]), vector_text(filler.vector))
                )  # fmt: skip
        with cursor.copy(f"COPY {tables.sources} ({source_columns}) FROM STDIN") as copy:
            for filler in fillers:
                source = filler.source
                copy.write_row(
                    (
                        filler.memory_id,
                        source.agent_id,
                        source.session_id,
                        source.turn,
                        source.attempt,
                        created,
                    )
                )
        with cursor.copy(f"COPY {tables.terms} (memory_id, term, tf) FROM STDIN") as copy:
            for memory_id, held in lexical.items():
                for term, count in Counter(held).items():
                    copy.write_row((memory_id, term, count))
        with cursor.copy(f"COPY {tables.names} (memory_id, kind, name) FROM STDIN") as copy:
            for filler in fillers:
                for kind, name in memory_names(filler.text, filler.text).rows():
                    copy.write_row((filler.memory_id, kind, name))
        with cursor.copy(f"COPY {tables.winners} (session_id, turn, agent_id, attempt) FROM STDIN") as copy:
            for winner in filler_winners(size, SESSIONS, AGENTS):
                copy.write_row(winner)
    for table in (tables.index, tables.sources, tables.terms, tables.names, tables.winners, tables.stale):
        index.server.run(f"VACUUM (ANALYZE) {table}")


@dataclass
class Latencies:
    """Milliseconds of every timed search, by store (``local``, ``server``) and scope."""

    times: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    embedding: list[float] = field(default_factory=list)
    differing: int = 0
    """Searches whose hits (ids, in order) differ between the two stores."""

    def add(self, store: str, scope: str, milliseconds: float) -> None:
        self.times.setdefault(store, {}).setdefault(scope, []).append(milliseconds)

    def p50(self, store: str, scope: str | None = None) -> float:
        by_scope = self.times[store]
        return statistics.median(by_scope[scope] if scope else [t for ts in by_scope.values() for t in ts])

    def p95(self, store: str, scope: str | None = None) -> float:
        by_scope = self.times[store]
        found = by_scope[scope] if scope else [t for ts in by_scope.values() for t in ts]
        return statistics.quantiles(found, n=20)[18] if len(found) > 1 else found[0]


def _timed(store: PersistentMemory, question: str, scope: SearchFilter) -> tuple[float, list[str]]:
    started = time.perf_counter()
    hits = store.search(question, limit=LIMIT, scope=scope, method="hybrid")
    return (time.perf_counter() - started) * 1000, [hit.id for hit in hits]


class EmbeddedBeforehand:
    """A store's embedding whose vector of the question being asked was made beforehand (and timed on
    its own): the searches' figures are then the ranking's, the same work on every index."""

    def __init__(self, embedding: Any, question: str, vector: Any):
        self.embedding, self.question, self.vector = embedding, question, vector

    def embed(self, texts: list[str]) -> list[Any]:
        return [self.vector if text == self.question else self.embedding.embed([text])[0] for text in texts]


@contextmanager
def asking(stores: dict[str, PersistentMemory], question: str, vector: Any) -> Iterator[None]:
    """Every store's searches take ``vector`` as ``question``'s."""
    searchers = [store.searcher for store in stores.values()]
    embeddings = [searcher.embedding for searcher in searchers]
    for searcher, embedding in zip(searchers, embeddings, strict=True):
        searcher.embedding = EmbeddedBeforehand(embedding, question, vector)  # type: ignore[assignment]
    try:
        yield
    finally:
        for searcher, embedding in zip(searchers, embeddings, strict=True):
            searcher.embedding = embedding


def measure(stores: dict[str, PersistentMemory], size: int, queries: int) -> Latencies:
    """``queries`` questions, each embedded once (timed apart) and searched in every scope on every
    store in turn, each store first for half of them (after a warm-up of each scope: the local index
    reads its vectors into memory on its first search)."""
    asked = questions()
    latencies = Latencies()
    for kind in SCOPES:
        for store in stores.values():
            store.search("warm up", limit=LIMIT, scope=scope_of(kind, 0, size))
    for number in range(queries):
        question = asked[number % len(asked)]
        started = time.perf_counter()
        [vector] = next(iter(stores.values())).embedding.embed([question])
        latencies.embedding.append((time.perf_counter() - started) * 1000)
        with asking(stores, question, vector):
            for kind in SCOPES:
                scope = scope_of(kind, number, size)
                found = {}
                order = list(stores.items())
                for name, store in order[::-1] if number % 2 else order:  # each store first half the time
                    milliseconds, found[name] = _timed(store, question, scope)
                    latencies.add(name, kind, milliseconds)
                latencies.differing += len({tuple(hits) for hits in found.values()}) > 1
    return latencies


@contextmanager
def side_by_side(size: int, url: str | None) -> Iterator[dict[str, PersistentMemory]]:
    """A local store and (given a server) a server store of ``size`` memories, in a temporary folder;
    the server's tables are dropped afterwards."""
    collection = f"ranking_{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as folder:
        stores = {"local": open_store(Path(folder) / "local")}
        try:
            fill_local(stores["local"], size)
            if url:
                stores["server"] = open_store(Path(folder) / "server", server_settings(url, collection))
                fill_server(stores["server"], size)
            yield stores
        finally:
            for store in stores.values():
                store.close()
            close_clients()
            if url:
                drop_tables(url, collection)


def drop_tables(url: str, collection: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE %s",
            (collection.replace("_", "\\_") + "\\_%",),
        )
        for (table,) in found.fetchall():
            connection.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table)))


def ranking_figures(sizes: list[int], queries: int, url: str | None) -> dict[str, float]:
    """p50 ms of ``store.search`` over every scope on the local index and (given a server) the server
    index at each size, the question embedded beforehand, the server's over the local's, and the p50 of
    embedding a question (which a search adds to these on either index)."""
    figures: dict[str, float] = {}
    embedding: list[float] = []
    for size in sizes:
        with side_by_side(size, url) as stores:
            latencies = measure(stores, size, queries)
        embedding += latencies.embedding
        for store in stores:
            figures[f"{store}_ranking_p50_ms_{size}"] = round(latencies.p50(store), 2)
        if "server" in stores:
            ratio = latencies.p50("server") / latencies.p50("local")
            figures[f"server_over_local_ranking_p50_{size}"] = round(ratio, 2)
    figures["ranking_query_embedding_p50_ms"] = round(statistics.median(embedding), 2)
    return figures


def statements_of_search(
    store: PersistentMemory, question: str, scope: SearchFilter
) -> list[tuple[str, Any, float]]:
    """Every statement one search sends the server, with its parameters and milliseconds."""
    server: Any = store.index.server  # type: ignore[attr-defined]
    sent: list[tuple[str, Any, float]] = []
    rows = server.rows

    def timed_rows(statement: str, params: Any = None) -> list[tuple[Any, ...]]:
        started = time.perf_counter()
        try:
            return rows(statement, params)
        finally:
            sent.append((statement, params, (time.perf_counter() - started) * 1000))

    server.rows = timed_rows
    try:
        store.search(question, limit=LIMIT, scope=scope, method="hybrid")
    finally:
        del server.rows
    return sent


def explain(store: PersistentMemory, size: int) -> None:
    """For one question per scope: the statements a search sends, timed, and the server's plan of the
    ranking statement."""
    server: Any = store.index.server  # type: ignore[attr-defined]
    question = CHATTER_QUESTIONS[0]
    for kind in SCOPES:
        scope = scope_of(kind, 1, size)
        sent = statements_of_search(store, question, scope)
        print(f"\n=== {size} memories, {kind} scope: {len(sent)} statements")
        for statement, _, milliseconds in sent:
            print(f"  {milliseconds:7.2f} ms  {' '.join(statement.split())[:110]}")
        ranking, params, _ = next(item for item in sent if "fused AS" in item[0])
        plan = server.rows("EXPLAIN (ANALYZE, BUFFERS) " + ranking, params)
        print("\n".join(row[0] for row in plan))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--queries", type=int, default=60, help="questions per scope and store")
    parser.add_argument("--explain", action="store_true", help="print the server's plans too")
    parser.add_argument("--url", help="a PostgreSQL database with the vector extension (default: start one)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        from tests.servers.postgres import start_postgres

        server = start_postgres(*SERVER_SETTINGS)
        url = server.url
    try:
        figures: dict[str, float] = {}
        for size in args.sizes:
            with side_by_side(size, url) as stores:
                latencies = measure(stores, size, args.queries)
                if args.explain:
                    explain(stores["server"], size)
            print(f"\n{size} memories, {args.queries} questions per scope, p50 / p95 ms of store.search "
                  "(the question embedded beforehand)")  # fmt: skip
            print(f"{'scope':<8}" + "".join(f"  {name:>16}" for name in stores) + "  server/local")
            for kind in (*SCOPES, None):
                cells = [f"{latencies.p50(n, kind):7.2f} / {latencies.p95(n, kind):6.2f}" for n in stores]
                ratio = latencies.p50("server", kind) / latencies.p50("local", kind)
                print(f"{kind or 'all':<8}" + "".join(f"  {cell:>16}" for cell in cells) + f"  {ratio:12.2f}")
            print(f"hits differing: {latencies.differing} of {args.queries * len(SCOPES)} searches; "
                  f"embedding a question, p50: {statistics.median(latencies.embedding):.2f} ms")  # fmt: skip
            figures |= {f"{n}_ranking_p50_ms_{size}": round(latencies.p50(n), 2) for n in stores}
    finally:
        if server is not None:
            server.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()

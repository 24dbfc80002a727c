"""Names in the ranking: a query that names a speaker ranks their memories ahead of look-alikes, and
ahead of the lines that only address them, in every index, also for memories stored before the index
kept names."""

from __future__ import annotations

import sqlite3
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames, query_names, without_speakers
from massgen_cli.memory.longterm.retrieve.ranking import Method
from massgen_cli.memory.longterm.store.index.terms import stem, terms
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.qdrant.points import document_terms, term_index
from massgen_cli.memory.longterm.store.vector_stores import close_clients, share_server_client
from tests.servers.qdrant import in_process_server

MEMORIES = (
    ("walrus", "named", "Walrus adopted a puppy named Biscuit"),
    ("marten", "named", "Marten adopted a rabbit"),
    ("walrus", "unnamed", "We brought home a puppy called Biscuit."),
    ("marten", "unnamed", "I adopted a rabbit."),
    ("marten", "dated", "I adopted a rabbit yesterday."),
)
"""Two agents' memories in three sessions: in ``named`` their texts name them, in ``unnamed`` only who
recorded them does; ``dated`` says when, relative to the day it is recorded."""
PUPPY = "We brought home a puppy called Biscuit."


def test_a_memory_names_its_speaker_not_the_names_its_text_mentions():
    names = memory_names("[8 May 2023] Dr. Smith: We met Ana in Lisbon.", "We met Ana in Lisbon.")
    assert names.rows() == [("speaker", "dr smith")]
    assert memory_names("bare text, no header", "bare text, no header").rows() == []


def test_a_query_names_speakers_in_any_case():
    found = query_names("What did agent_b tell Nora's sister? Ask walrus.")
    assert {"agent_b", "nora", "walrus", "agent_b tell"} <= set(found.speakers)
    assert "what" not in found.speakers and "what did" not in found.speakers, "common words name no one"
    assert not query_names("what is it?") and query_names("what is it?") == QueryNames()


def test_a_question_is_embedded_without_the_speakers_it_names():
    question = "When did Caroline go to the support group with Mel's sister?"
    assert without_speakers(question, {"caroline"}) == "When did go to the support group with Mel's sister?"
    assert without_speakers("What is CAROLINE's job?", {"caroline"}) == "What is job?"
    assert without_speakers("Did Dr. Smith call?", {"dr smith"}) == "Did call?"
    assert without_speakers("What did agent_b say?", {"agent_b", "nora"}) == "What did say?"
    assert without_speakers("Who is Carolines?", {"caroline"}) == "Who is Carolines?", "whole words only"
    assert without_speakers("Caroline?", {"caroline"}) == "Caroline?", "a name alone stays"


def record_agents(store: PersistentMemory) -> None:
    for turn, (agent, session, text) in enumerate(MEMORIES, start=1):
        store.record([{"role": "assistant", "content": text}], RecordContext(agent, session, turn))


def first_answer(store: PersistentMemory, question: str, session: str, method: Method = "hybrid") -> str:
    return store.search(question, limit=1, scope=SearchFilter(session_id=session), method=method)[0].text


@dataclass(frozen=True)
class IndexKind:
    """How to open a store of one index kind, take its names, dated terms and days away (as an index
    made before they were kept), count the names it holds, and count the memories whose terms hold a
    term."""

    open: Callable[[], PersistentMemory]
    forget: Callable[[], None]
    names: Callable[[], int]
    holding: Callable[[str], int]


def local_kind(state: Path) -> IndexKind:
    settings = PersistentMemoryConfig(enabled=True)

    def run(sql: str, *params: Any) -> list[Any]:
        db = sqlite3.connect(state / "memory" / "index.db")
        with db:
            found = db.execute(sql, params).fetchall()
        db.close()
        return found

    def forget() -> None:
        run("DELETE FROM names")
        run("DELETE FROM meta WHERE name = 'index_form'")
        for memory_id, indexed in run("SELECT id, indexed FROM memories"):
            run("INSERT INTO names VALUES (?, 'entity', 'biscuit')", memory_id)  # as the third form kept
            run("UPDATE memories_fts SET body = ? WHERE id = ?", " ".join(terms(indexed)), memory_id)
            run("UPDATE memories SET length = ?, day = NULL WHERE id = ?", len(terms(indexed)), memory_id)

    return IndexKind(
        lambda: PersistentMemory(settings, state, domain="d", task_type="t"),
        forget,
        lambda: len(run("SELECT * FROM names")),
        lambda term: len(run("SELECT id FROM memories_fts WHERE memories_fts MATCH ?", f'"{term}"')),
    )


def pgvector_kind(state: Path, url: str) -> IndexKind:
    collection = f"names_{uuid.uuid4().hex[:10]}"
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "pgvector",
         "pgvector": {"connection_string": url, "collection_name": collection}}
    )  # fmt: skip

    def run(sql: str, *params: Any) -> list[Any]:
        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def forget() -> None:
        run(f'DELETE FROM "{collection}_names"')
        run(f"DELETE FROM \"{collection}_meta\" WHERE name = 'index_form'")
        for memory_id, indexed in run(f'SELECT id, indexed FROM "{collection}_index"'):
            run(f"INSERT INTO \"{collection}_names\" VALUES (%s, 'entity', 'biscuit')", memory_id)
            run(
                f'UPDATE "{collection}_index" SET length = %s, day = NULL WHERE id = %s',
                len(terms(indexed)),
                memory_id,
            )
            run(f'DELETE FROM "{collection}_terms" WHERE memory_id = %s', memory_id)
            for term, count in Counter(terms(indexed)).items():
                run(f'INSERT INTO "{collection}_terms" VALUES (%s, %s, %s)', memory_id, term, count)

    return IndexKind(
        lambda: PersistentMemory(settings, state, domain="d", task_type="t"),
        forget,
        lambda: len(run(f'SELECT * FROM "{collection}_names"')),
        lambda term: len(run(f'SELECT memory_id FROM "{collection}_terms" WHERE term = %s', term)),
    )


def qdrant_kind(state: Path, server: Any) -> IndexKind:
    from qdrant_client import models

    collection = f"names_{uuid.uuid4().hex[:10]}"
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "qdrant",
         "qdrant": {"mode": "server", "url": "http://qdrant.invalid:6333", "collection_name": collection}}
    )  # fmt: skip
    every = models.Filter(must=[])
    meta = models.Filter(
        must=[
            models.FieldCondition(key="kind", match=models.MatchValue(value="meta")),
            models.FieldCondition(key="name", match=models.MatchValue(value="index_form")),
        ]
    )

    def open_store() -> PersistentMemory:
        share_server_client(settings, server)
        return PersistentMemory(settings, state, domain="d", task_type="t")

    def forget() -> None:
        server.delete_payload(f"{collection}_index", ["speaker", "entities", "day"], points=every)
        server.delete(f"{collection}_records", meta)
        points, _ = server.scroll(f"{collection}_index", limit=100, with_payload=["indexed"])
        plain = [models.PointVectors(id=p.id, vector={"terms": document_terms(terms(p.payload["indexed"]))})
                 for p in points]  # fmt: skip
        server.update_vectors(f"{collection}_index", plain)
        server.set_payload(f"{collection}_index", {"entities": ["biscuit"]}, points=every)  # the third form's
        for point in points:
            length = {"length": len(terms(point.payload["indexed"]))}
            server.set_payload(f"{collection}_index", length, points=[point.id])

    def names() -> int:
        points, _ = server.scroll(f"{collection}_index", limit=100, with_payload=["speaker", "entities"])
        return sum(bool(p.payload.get("speaker")) + len(p.payload.get("entities", [])) for p in points)

    def holding(term: str) -> int:
        points, _ = server.scroll(f"{collection}_index", limit=100, with_vectors=["terms"])
        return sum(term_index(term) in p.vector["terms"].indices for p in points)

    return IndexKind(open_store, forget, names, holding)


@pytest.fixture(params=["local", "pgvector", "qdrant"])
def index_kind(request, tmp_path) -> Iterator[IndexKind]:  # type: ignore[no-untyped-def]
    if request.param == "local":
        yield local_kind(tmp_path)
    elif request.param == "pgvector":
        yield pgvector_kind(tmp_path, request.getfixturevalue("pgvector_url"))
    else:
        server = in_process_server()
        yield qdrant_kind(tmp_path, server)
        close_clients()
        server.close()


def dated_between(store: PersistentMemory, since: date, until: date) -> list[str]:
    scope = SearchFilter(session_id="dated", since=since, until=until)
    return [hit.text for hit in store.search("rabbit", limit=5, scope=scope)]


def test_a_named_agent_comes_first_and_an_old_index_learns_names_and_dates_when_opened(index_kind):
    today = datetime.now(UTC).date()  # records are dated in UTC
    yesterday = today - timedelta(days=1)
    day_words = f"{yesterday.day} {yesterday:%B}"
    month_term = stem(f"{yesterday:%B}".lower())
    store = index_kind.open()
    try:
        record_agents(store)
        dense = first_answer(store, "What did Walrus adopt?", "unnamed", "dense")
        assert dense == "I adopted a rabbit.", "similarity alone picks the other agent's look-alike"
        assert first_answer(store, "What did Walrus adopt?", "unnamed") == PUPPY
        assert first_answer(store, "what did marten adopt", "unnamed") == "I adopted a rabbit."
        named = first_answer(store, "What did Walrus adopt?", "named")
        assert named == "Walrus adopted a puppy named Biscuit"
        assert first_answer(store, day_words, "dated", "lexical") == "I adopted a rabbit yesterday."
        assert dated_between(store, today, today) == ["I adopted a rabbit yesterday."]
    finally:
        store.close()
        close_clients()
    kept, held = index_kind.names(), index_kind.holding(month_term)
    assert kept == 5, "each memory's speaker, and no name its text mentions"
    assert held >= 1, "the dated memory holds the month it names (and each memory its own month)"
    index_kind.forget()
    assert index_kind.names() == 5 and index_kind.holding(month_term) == 0, "only a mentioned name each"
    store = index_kind.open()
    try:
        assert index_kind.names() == kept and index_kind.holding(month_term) == held
        assert first_answer(store, "What did Walrus adopt?", "unnamed") == PUPPY
        assert first_answer(store, day_words, "dated", "lexical") == "I adopted a rabbit yesterday."
        assert dated_between(store, today, today) == ["I adopted a rabbit yesterday."], "its day again"
        assert dated_between(store, yesterday, yesterday) == [], "dated the day it was said"
    finally:
        store.close()
        close_clients()


TALK = (
    ("8 May 2023", "Felix", "Nora, hi! How was your week?"),
    ("8 May 2023", "Nora", "Busy! We finally adopted a kitten from the shelter on Saturday."),
    ("8 May 2023", "Felix", "Nora, that's wonderful news!"),
    ("8 May 2023", "Nora", "She is tiny and grey, and she sleeps on my keyboard."),
    ("20 May 2023", "Felix", "Nora, that's wonderful news! Wow, Nora, good for you!"),
    ("20 May 2023", "Nora", "Thanks! Felix, how is the new bike?"),
    ("20 May 2023", "Felix", "Fast! I adopted a new route to work, Nora."),
    ("3 June 2023", "Felix", "Nora, that's wonderful news!"),
    ("3 June 2023", "Felix", "Yeah, Nora! Did you name her yet, Nora?"),
)
"""Felix keeps addressing Nora by name, in stock lines said on several days; only Nora says what she
adopted."""


def test_a_question_about_someone_ranks_their_own_line_before_the_lines_that_address_them(index_kind):
    from massgen_cli.cli.memory_import import import_context, import_message

    lines = [{"content": text, "speaker": who, "timestamp": day} for day, who, text in TALK]
    store = index_kind.open()
    try:
        store.record_many([(import_message(line), import_context(line, "talk", None)) for line in lines])
        store.record_winner("talk", 0, "import")
        top = store.search("What pet did Nora adopt?", limit=3, scope=SearchFilter(session_id="talk"))
        assert top[0].text == TALK[1][2], [hit.text for hit in top]
        assert any(hit.source.extra["speaker"] == "Felix" for hit in top), "the others still follow"
        every = store.search("Nora's wonderful news", limit=10, scope=SearchFilter(session_id="talk"))
        echoed = [hit.text for hit in every if hit.text == "Nora, that's wonderful news!"]
        assert len(echoed) == 2 and every[-1].text == echoed[0], "said on two days: its echo comes last"
    finally:
        store.close()
        close_clients()

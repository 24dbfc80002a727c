"""Hybrid ranking beats dense-only on the synthetic long-conversation set (a quality check, not a timing)."""

from __future__ import annotations

import pytest

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.keys import memory_key
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.script_module import load_script

synthetic = load_script("benchmarks/synthetic_conversations.py")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):  # type: ignore[no-untyped-def]
    conversation = synthetic.build_conversation(people=20, chatter_per_fact=4, seed=11)
    store = PersistentMemory(
        PersistentMemoryConfig(enabled=True),
        tmp_path_factory.mktemp("quality"),
        domain="qa",
        task_type="recall",
    )
    synthetic.load_into(store, conversation)
    yield store, conversation
    store.close()
    close_clients()


def test_hybrid_beats_dense_and_matches_lexical(loaded):
    store, conversation = loaded
    recall = {
        method: synthetic.recall_at(store, conversation, 5, method)
        for method in ("dense", "lexical", "hybrid")
    }
    assert recall["hybrid"] > recall["dense"], recall
    assert recall["hybrid"] >= recall["lexical"], recall


def test_lexical_index_follows_deletes(loaded):
    store, conversation = loaded
    probe = conversation.probes[0]
    [hit] = store.search(probe.question, limit=1, method="lexical")
    assert [i for i, _ in store.index.lexical(probe.question, 50)].count(hit.id) == 1
    store.forget([hit.id])
    assert store.index.pending() == []
    assert hit.id not in dict(store.index.lexical(probe.question, 50))
    assert hit.id not in {h.id for h in store.search(probe.question, limit=10, method="hybrid")}


def test_recall_is_the_same_alone_and_crowded(tmp_path):
    conversation = synthetic.build_conversation(people=12, chatter_per_fact=4, seed=5)
    store = PersistentMemory(PersistentMemoryConfig(enabled=True), tmp_path, domain="qa", task_type="recall")
    try:
        synthetic.load_into(store, conversation, "asked")
        alone = synthetic.recall_at(store, conversation, 5, "hybrid", "asked")
        for seed in (21, 22):  # the same people and topics, other facts, other sessions
            synthetic.load_into(store, synthetic.build_conversation(12, 4, seed=seed), f"other_{seed}")
        crowded = synthetic.recall_at(store, conversation, 5, "hybrid", "asked")
        unscoped = synthetic.recall_at(store, conversation, 5, "hybrid")
    finally:
        store.close()
        close_clients()
    assert alone > 0.5, alone
    assert abs(crowded - alone) <= 0.05, (alone, crowded)
    assert unscoped < crowded, "the crowd was there to be filtered out"


dialogues = load_script("benchmarks/long_dialogues.py")


def test_a_sessions_results_are_identical_alone_and_among_look_alike_sessions(tmp_path):
    """Every method's top 10, in order, for every question of a conversation: the same whether its store
    holds it alone or beside look-alike conversations (same kinds of facts and stock lines such as
    "Take care!", other people and values) recorded before and after it."""
    small = {"sessions": 4, "turns_per_session": 16, "facts_each": 4}
    asked = dialogues.build_dialogue(7, **small)
    crowd = [dialogues.build_dialogue(seed, **small) for seed in (8, 9)]
    settings = PersistentMemoryConfig(enabled=True)
    alone = PersistentMemory(settings, tmp_path / "alone", domain="d", task_type="t")
    shared = PersistentMemory(settings, tmp_path / "shared", domain="d", task_type="t")
    try:
        dialogues.load_dialogue(alone, asked, "asked")
        dialogues.load_dialogue(shared, crowd[0], "before")
        dialogues.load_dialogue(shared, asked, "asked")
        dialogues.load_dialogue(shared, crowd[1], "after")
        for question in asked.questions:
            for method in ("dense", "lexical", "hybrid"):
                lists = [
                    [(hit.text, hit.source.extra["dia_id"], round(hit.score, 6)) for hit in store.search(
                        question.text, limit=10, method=method, scope=SearchFilter(session_id="asked"))]
                    for store in (alone, shared)
                ]  # fmt: skip
                assert lists[0] and lists[0] == lists[1], (method, question.text)
    finally:
        alone.close()
        shared.close()
        close_clients()


def test_an_index_of_the_earlier_text_form_is_rewritten_when_opened(tmp_path):
    """An index whose lexical table holds ``<date> · turn <N> · <speaker>: <text>`` (porter-stemmed by
    FTS5) is rewritten in today's form on open: keys with speaker and date, terms, no vector until the
    next dense search makes it."""
    settings = PersistentMemoryConfig(enabled=True)
    store = PersistentMemory(settings, tmp_path, domain="d", task_type="t")
    message = {"role": "user", "content": "The ferry leaves at 06:40.", "metadata": {"speaker": "Ann"}}
    store.record([message], RecordContext("import", "s", 0))
    db = store.index._db
    db.execute("DROP TABLE memories_fts")
    db.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(id UNINDEXED, body, tokenize = 'porter')")
    [(memory_id,)] = db.execute("SELECT id FROM memories").fetchall()
    old_form = "2 May 2023 · turn 0 · Ann: The ferry leaves at 06:40."
    db.execute("INSERT INTO memories_fts VALUES (?, ?)", (memory_id, old_form))
    db.execute("UPDATE memories SET indexed = NULL, length = NULL, key = 'd:t:0000'")
    db.execute("DELETE FROM meta WHERE name = 'text_form'")
    store.close()

    reopened = PersistentMemory(settings, tmp_path, domain="d", task_type="t")
    try:
        row = reopened.index._db.execute("SELECT key, indexed, length, vector FROM memories").fetchone()
        assert row[1] == "[2 May 2023] Ann: The ferry leaves at 06:40." and row[2] == 10 and row[3] is None
        assert row[0] == memory_key(row[1], "d", "t")
        [hit] = reopened.search("When does the ferry leave?", limit=1, scope=SearchFilter(session_id="s"))
        assert hit.id == memory_id
        assert reopened.index.without_vectors(10) == [], "the dense search made its vector again"
        assert [h.id for h in reopened.search("ann 2023", limit=1, method="lexical")] == [memory_id]
    finally:
        reopened.close()
        close_clients()


def test_an_index_of_the_second_form_splits_its_terms_at_underscores_when_opened(tmp_path):
    """Terms of the second form kept ``agent_a`` whole, where FTS5 counts two tokens (so its lengths and
    every other index's disagreed); on open the terms are made again from the indexed text, which stays."""
    settings = PersistentMemoryConfig(enabled=True)
    store = PersistentMemory(settings, tmp_path, domain="d", task_type="t")
    store.record(
        [{"role": "assistant", "content": "The tide_table is ready"}], RecordContext("agent_a", "s", 1)
    )
    db = store.index._db
    [(memory_id, indexed, key)] = db.execute("SELECT id, indexed, key FROM memories").fetchall()
    db.execute("UPDATE memories_fts SET body = 'agent_a the tide_tabl i readi' WHERE id = ?", (memory_id,))
    db.execute("UPDATE memories SET length = 5")
    db.execute("UPDATE meta SET value = '2' WHERE name = 'text_form'")
    store.close()

    reopened = PersistentMemory(settings, tmp_path, domain="d", task_type="t")
    try:
        db = reopened.index._db
        [(length,)] = db.execute("SELECT length FROM memories WHERE indexed = ? AND key = ?", (indexed, key))
        [(body,)] = db.execute("SELECT body FROM memories_fts")
        assert "agent a the tide tabl i readi" in body, "agent_a and tide_table split in two"
        assert body.split() == memory_terms(indexed, "The tide_table is ready") and length == len(
            body.split()
        )
        assert [h.id for h in reopened.search("tide", limit=1, scope=SearchFilter(session_id="s"))] == [
            memory_id
        ]
    finally:
        reopened.close()
        close_clients()

"""Ranking a conversation as a conversation, in every index (local, PostgreSQL, Qdrant): a question is
embedded without the speakers it names, the answer to a line that asks comes next to it (and ahead of it,
when said by the speaker the question names), and a question that names a day finds what was said that
day first."""

from __future__ import annotations

from massgen_cli.cli.memory_import import import_context, import_message
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.terms import query_terms, terms
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.memory.longterm import test_names
from tests.memory.longterm.test_names import IndexKind

index_kind = test_names.index_kind  # local, PostgreSQL and Qdrant

TALK = (
    ("8 May 2023", "Nora", "I went to a support group yesterday and it was so powerful."),
    ("8 May 2023", "Felix", "Wow, Nora! They must have felt so appreciated."),
    ("8 May 2023", "Nora", "I also finished the novel about the lighthouse keeper."),
    ("8 May 2023", "Felix", "What did you take away from the lighthouse book?"),
    ("8 May 2023", "Nora", "It taught me that patience pays off in the end."),
    ("8 May 2023", "Felix", "Nora, that is lovely. I went hiking on the ridge trail."),
    ("20 May 2023", "Felix", "Hiking again! The ridge trail, the lake trail, every hiking trail in town."),
    ("20 May 2023", "Nora", "Hiking sounds great, Felix!"),
    ("3 June 2023", "Nora", "I tried the hiking trail by the old mill last weekend."),
)
"""Two people in three sessions: Felix asks what Nora took from a book and she answers in words the
question does not hold; Felix hikes on two days."""
SCOPE = SearchFilter(session_id="talk")


def open_talk(kind: IndexKind) -> PersistentMemory:
    lines = [{"content": text, "speaker": who, "timestamp": day} for day, who, text in TALK]
    store = kind.open()
    store.record_many([(import_message(line), import_context(line, "talk", None)) for line in lines])
    store.record_winner("talk", 0, "import")
    return store


def texts(store: PersistentMemory, question: str, method: str = "hybrid", limit: int = 3) -> list[str]:
    return [hit.text for hit in store.search(question, limit=limit, scope=SCOPE, method=method)]  # type: ignore[arg-type]


def test_a_conversation_ranks_without_the_names_next_to_questions_and_by_the_day_asked(index_kind):
    store = open_talk(index_kind)
    try:
        question = "When did Nora go to the support group?"
        with_name = store.embedding.embed([question])[0]
        addressed = store.index.ranked(question, with_name, 10, SCOPE, "dense")
        assert store.index.get([addressed[0][0]])[addressed[0][0]].text == TALK[1][2], "the name's likeness"
        assert texts(store, question, "dense")[0] == TALK[0][2], "embedded without the name"

        answer = TALK[4][2]
        asked = "What did Nora take away from the lighthouse book?"
        assert not set(query_terms(asked)) & set(terms(answer)), "the answer holds none of its words"
        found = texts(store, asked)
        assert answer in found[:2], "lifted next to the line that asks"
        assert found.index(answer) < found.index(TALK[3][2]), "and re-ranked ahead of it: Nora said it"

        assert texts(store, "Where did Felix go hiking?")[0] == TALK[6][2], "the most words first"
        assert texts(store, "Where did Felix go hiking on 8 May 2023?")[0] == TALK[5][2], "the day asked"
    finally:
        store.close()
        close_clients()

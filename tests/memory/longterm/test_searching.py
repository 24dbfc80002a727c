"""Searches rank inside their filters: scope and visibility never lose to a crowd of other memories;
what is indexed carries the speaker and the date; a store without vectors gets them at the first search."""

from __future__ import annotations

import json

from massgen_cli.memory.longterm.record.memories import RecordContext, Source
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.cli.in_process_cli import massgen

CROWD = 500  # five times the candidate pool (100) an unfiltered ranking would take
CROWD_VECTORS: dict[tuple[str, int], list[list[float]]] = {}
"""The crowd's vectors, embedded once per process: the same texts by the same embedder give the same
vectors (the suite runs a file's tests in one process, ``--dist loadfile``)."""


def crowd(store, count: int, topic: str) -> None:  # type: ignore[no-untyped-def]
    """``count`` memories of other sessions on the same topic, with their real vectors."""
    texts = [
        f"{topic} note {n}: the harbour ferry timetable for the first boat changed" for n in range(count)
    ]
    if (topic, count) not in CROWD_VECTORS:
        CROWD_VECTORS[topic, count] = store.embedding.embed(texts)
    vectors = CROWD_VECTORS[topic, count]
    fields = {"domain": store.domain, "task_type": store.task_type, "role": "user"}
    for n, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        store.index.add(
            f"crowd-{n}",
            f"general:general:crowd{n}",
            text,
            fields,
            Source("u", f"other{n % 7}", n, 1),
            vector,
        )


def test_an_own_session_record_is_found_among_a_crowd_by_the_cli(store):
    store.record(
        [{"role": "user", "content": "The harbour ferry timetable moved the first boat to 6:40."}],
        RecordContext("user", "mine", 1),
    )
    crowd(store, CROWD, "Ferry")
    unscoped = store.search("harbour ferry timetable first boat", limit=5)
    assert all(hit.source.session_id != "mine" for hit in unscoped), "the crowd outranks it without a filter"
    store.close()
    close_clients()
    result = massgen(
        "memory",
        "search",
        "harbour ferry timetable first boat",
        "--session",
        "mine",
        "--json",
        "--state-dir",
        str(store.state_dir),
    )
    assert result.exit_code == 0, result.stderr
    [line] = result.stdout.splitlines()
    found = json.loads(line)
    assert found["text"] == "The harbour ferry timetable moved the first boat to 6:40."
    assert found["metadata"]["session_id"] == "mine"


def test_turn_aware_visibility_holds_in_a_crowd(store):
    store.record(
        [{"role": "assistant", "content": "Winner: the ferry leaves at 6:40."}], RecordContext("a", "s", 1)
    )
    store.record_winner("s", 1, "a", attempt=1)
    crowd(store, CROWD, "Ferry")
    hits = store.search("when does the ferry leave", limit=3, scope=SearchFilter(viewer=Viewer("b", "s", 2)))
    assert [hit.text for hit in hits] == ["Winner: the ferry leaves at 6:40."]


def test_a_rejected_attempt_is_not_shown_as_the_winners(store):
    rejected = "Attempt one said the bridge opens at noon."
    accepted = "Attempt two said the bridge opens at dawn."
    store.record([{"role": "assistant", "content": rejected}], RecordContext("a", "s", 1, attempt=1))
    store.record([{"role": "assistant", "content": accepted}], RecordContext("a", "s", 1, attempt=2))
    assert {
        h.text for h in store.search("bridge opens", limit=5, scope=SearchFilter(viewer=Viewer("a", "s", 2)))
    } == {
        rejected,
        accepted,
    }, "both are the winner's own records"
    store.record_winner("s", 1, "a", attempt=2)
    seen = [
        hit.text
        for hit in store.search("bridge opens", limit=5, scope=SearchFilter(viewer=Viewer("b", "s", 2)))
    ]
    assert seen == [accepted]


def test_speaker_and_date_of_an_import_are_searchable(tmp_path):
    """The same words said by two people on two days are told apart by who and when alone."""
    lines = [
        {"content": "I went to a pottery class yesterday.", "speaker": "Caroline", "timestamp": "8 May 2023"},
        {"content": "I went to a pottery class yesterday.", "speaker": "Melanie", "timestamp": "3 July 2023"},
        *(
            {"content": f"I went to a meeting about item {n} yesterday.", "speaker": "Melanie"}
            for n in range(30)
        ),
    ]
    path = tmp_path / "talk.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    assert massgen("memory", "import", str(path), "--session", "talk").exit_code == 0
    for query, speaker, date in (
        ("When did Caroline go to the pottery class?", "Caroline", "8 May 2023"),
        ("Who went to a pottery class in July 2023?", "Melanie", "3 July 2023"),
    ):
        result = massgen("memory", "search", query, "--session", "talk", "--json", "--limit", "1")
        assert result.exit_code == 0, result.stderr
        top = json.loads(result.stdout.splitlines()[0])
        assert top["text"] == "I went to a pottery class yesterday.", "shown: the original text"
        assert (top["metadata"]["speaker"], top["metadata"]["timestamp"]) == (speaker, date), query


def test_the_same_words_in_two_sessions_keep_each_sessions_speaker_and_date(tmp_path):
    """A line said in two conversations is shown, in each, with that conversation's speaker, date and
    dialogue id; its lexical and dense text carry nothing of the other conversation."""
    for session, speaker, date, dia_id in (
        ("locomo_3", "Deborah", "2 March 2023", "D3:7"),
        ("locomo_7", "Nate", "9 June 2023", "D7:13"),
    ):
        line = {"content": "Take care!", "speaker": speaker, "timestamp": date, "dia_id": dia_id}
        chatter = {"content": f"The {session} garden needs water.", "speaker": speaker, "timestamp": date}
        path = tmp_path / f"{session}.jsonl"
        path.write_text("\n".join(json.dumps(item) for item in (line, chatter)), encoding="utf-8")
        assert massgen("memory", "import", str(path), "--session", session).exit_code == 0
    for session, speaker, date, dia_id in (
        ("locomo_3", "Deborah", "2 March 2023", "D3:7"),
        ("locomo_7", "Nate", "9 June 2023", "D7:13"),
    ):
        for method in ("hybrid", "lexical", "dense"):
            result = massgen(
                "memory", "search", "take care", "--session", session, "--json", "--limit", "5",
                "--method", method,
            )  # fmt: skip
            assert result.exit_code == 0, result.stderr
            hits = [json.loads(line) for line in result.stdout.splitlines()]
            said = [hit for hit in hits if hit["text"] == "Take care!"]
            assert len(said) == 1, (session, method, hits)
            meta = said[0]["metadata"]
            assert (meta["speaker"], meta["timestamp"], meta["dia_id"]) == (speaker, date, dia_id)
            assert meta["session_id"] == session


def test_a_store_made_before_the_index_kept_vectors_gets_them_at_the_first_search(store):
    store.record(
        [{"role": "user", "content": "The lighthouse keeper is Morwenna."}], RecordContext("a", "s", 1)
    )
    store.index._db.execute("UPDATE memories SET vector = NULL")  # as an older version left the file
    assert len(store.index.without_vectors(10)) == 1
    [hit] = store.search("who looks after the lighthouse", limit=1, method="dense")
    assert hit.text == "The lighthouse keeper is Morwenna."
    assert store.index.without_vectors(10) == []


def test_echoes_come_after_every_first_saying_and_the_first_places_do_not_depend_on_the_limit(store):
    from massgen_cli.cli.memory_import import import_context, import_message

    stock = ["That's wonderful news about the boat!", "Wow, wonderful news about the boat!"]
    lines = [
        {"content": stock[n % 2], "speaker": "Felix", "timestamp": f"{n + 1} May 2023"} for n in range(12)
    ] + [
        {
            "content": f"The boat trip number {n} had wonderful weather.",
            "speaker": "Nora",
            "timestamp": "8 May 2023",
        }
        for n in range(12)
    ]
    store.record_many([(import_message(line), import_context(line, "talk", None)) for line in lines])
    scope = SearchFilter(session_id="talk")
    every = [hit.text for hit in store.search("wonderful news about the boat", limit=50, scope=scope)]
    assert len(every) == 24 and set(every[:2]) == set(stock), "each stock line once, first"
    assert set(every[-10:]) == set(stock), "the ten echoes last"
    for limit in (1, 3, 5):
        found = [hit.text for hit in store.search("wonderful news about the boat", limit=limit, scope=scope)]
        assert found == every[:limit], limit

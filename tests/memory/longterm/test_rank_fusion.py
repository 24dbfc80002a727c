"""The fusion's extra rankings and lifts, as pure functions: the memories dated when a question asks
about, the answer after a line that asks, and the second stage that re-ranks the fused head."""

from __future__ import annotations

from massgen_cli.memory.longterm.retrieve.answers import ANSWER_SHARE, answers_lifted, asks
from massgen_cli.memory.longterm.retrieve.ranking import DATED_WEIGHT, rrf_score, with_dated
from massgen_cli.memory.longterm.retrieve.rerank import (
    DEPTH,
    FEATURES,
    Candidate,
    asks_when,
    features,
    reranked,
)


def test_the_dated_ranking_adds_its_reciprocal_rank_and_keeps_the_fused_order_of_ties():
    fused = [("a", 0.9), ("b", 0.45), ("c", 0.45), ("d", 0.3)]
    found = with_dated(fused, [("d", 0.7), ("e", 0.2)])
    assert found[1] == ("d", 0.3 + rrf_score(0, DATED_WEIGHT))
    assert [memory_id for memory_id, _ in found] == ["a", "d", "b", "c", "e"]
    assert dict(found)["e"] == rrf_score(1, DATED_WEIGHT), "a dated memory outside the pool still ranks"
    assert with_dated(fused, []) == fused


def test_an_answer_is_lifted_right_after_its_question_when_both_are_candidates():
    ranked = [("question", 1.0), ("other", 0.7), ("third", 0.5), ("answer", 0.1)]
    lifted = answers_lifted(ranked, {"question": "answer", "third": "missing"})
    assert [memory_id for memory_id, _ in lifted] == ["question", "answer", "other", "third"]
    assert dict(lifted)["answer"] == ANSWER_SHARE * 1.0
    assert answers_lifted(ranked, {}) == ranked
    higher = answers_lifted([("question", 0.5), ("answer", 0.9)], {"question": "answer"})
    assert higher == [("answer", 0.9), ("question", 0.5)], "an answer never loses its own score"


def test_a_line_asks_when_it_holds_a_question_mark():
    assert asks("What did you take away from it?") and asks("Really? Tell me.")
    assert not asks("It taught me self-acceptance.")


def candidate(words: str, *, named=False, asks=False, answer=False, day="2023-05-08", says_when=False):
    return Candidate(frozenset(words.split()), named, asks, answer, day, says_when)


def test_the_second_stage_puts_the_named_speakers_own_answer_ahead_of_a_line_that_addresses_them():
    """Fused, "Wow, Nora!" (said to her, and asking) came first; Nora's own line of the question's
    words comes first once re-ranked. Scores keep falling with the places; past ``DEPTH`` nothing moves."""
    ranked = [("addressed", 0.9), ("other", 0.6), ("own", 0.5)] + [
        (f"far{n}", 0.1 - n / 1000) for n in range(40)
    ]
    candidates = {
        "addressed": candidate("wow nora", asks=True),
        "other": candidate("i went hike on the ridg trail with my dog today"),
        "own": candidate("i adopt a puppi name pepper from the shelter last week", named=True),
    } | {f"far{n}": candidate("fine thank") for n in range(40)}
    found = reranked(ranked, candidates, frozenset({"nora", "adopt", "puppi"}), when=False)
    assert [memory_id for memory_id, _ in found[:3]] == ["own", "other", "addressed"]
    assert [score for _, score in found] == sorted((score for _, score in ranked), reverse=True)
    assert found[DEPTH:] == ranked[DEPTH:], "past the re-ranked head, the fused order stands"


def test_the_second_stage_with_no_weight_keeps_the_fused_order_and_counts_what_it_says():
    ranked = [("a", 0.9), ("b", 0.5), ("c", 0.4)]
    candidates = {
        "a": candidate("we met yesterday", says_when=True),
        "b": candidate("same day", answer=True),
        "c": candidate("other day", day="2023-06-01"),
    }
    assert reranked(ranked, candidates, frozenset({"met"}), True, weights=[0.0] * len(FEATURES)) == ranked
    rows = dict(zip("abc", features(["a", "b", "c"], candidates, frozenset({"met"}), when=True), strict=True))
    column = {name: place for place, name in enumerate(FEATURES)}
    assert rows["a"][column["when"]] == 1.0 and rows["b"][column["when"]] == 0.0
    assert rows["a"][column["shared"]] == 1.0 and rows["b"][column["answer"]] == 1.0
    assert rows["a"][column["day"]] == rows["b"][column["day"]] == 1.0 + 5 / 6, "the day of a and b"
    assert rows["c"][column["day"]] == 5 / 7
    assert asks_when("When did Nora adopt a puppy?") and asks_when("how long has she had it?")
    assert not asks_when("What did Nora adopt when she moved?")

"""The fusion's extra rankings and lifts, as pure functions: the memories dated when a question asks
about, and the answer after a line that asks."""

from __future__ import annotations

from massgen_cli.memory.longterm.retrieve.answers import ANSWER_SHARE, answers_lifted, asks
from massgen_cli.memory.longterm.retrieve.ranking import DATED_WEIGHT, rrf_score, with_dated


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

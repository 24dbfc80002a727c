"""Deciding by agreement when the scores tie: the tied answer most like all the others wins (by meaning,
with the offline embedder), not the first registered — which gave "The answer is 2." to "What is 2+2?"."""

from __future__ import annotations

from massgen_cli.coordination.likeness import likeness
from massgen_cli.coordination.tally import agreement_leaders, agreement_scores, pick_by_agreement
from massgen_cli.events import Notice, RunEvent
from tests.scripted import scripted

QUESTION = "What is 2+2?"
RAMBLING = (
    "The answer to this classic math problem involves a bit of creative thinking and using basic arithmetic "
    "operations. In this case, it's not just adding two numbers together but actually combining them into a "
    "single number by performing the operation twice: first with addition (1 + 1) then with multiplication."
)
ANSWERS = {"first": "The answer is 2.", "second": "2 + 2 = 4.", "third": RAMBLING}
ORDER = list(ANSWERS)


def test_all_zero_scores_tie_and_registration_order_alone_would_pick_the_wrong_answer():
    assert agreement_scores(ANSWERS, QUESTION) == {"first": 0.0, "second": 0.0, "third": 0.0}
    assert agreement_leaders(ANSWERS, ORDER, QUESTION) == ORDER
    assert pick_by_agreement(ANSWERS, ORDER, QUESTION) == "first", "with nothing to break the tie"


def test_the_tie_goes_to_the_answer_most_like_the_others():
    like = likeness(ANSWERS)
    assert like is not None, "the offline embedder is installed with the local extra"
    assert max(like, key=like.__getitem__) == "second"
    assert pick_by_agreement(ANSWERS, ORDER, QUESTION, like) == "second"


def test_likeness_breaks_only_a_tie_and_equal_likeness_keeps_registration_order():
    answers = {"a": "Rome.", "b": "The capital is Rome.", "c": "Milan, I think."}
    assert agreement_leaders(answers, list(answers), "What is the capital of Italy?") == ["a", "b"]
    favours_c = {"a": 0.1, "b": 0.2, "c": 9.0}
    assert pick_by_agreement(answers, list(answers), "What is the capital of Italy?", favours_c) == "b"
    assert pick_by_agreement(answers, list(answers), "What is the capital of Italy?", {"a": 1, "b": 1}) == "a"


def test_a_run_deciding_by_agreement_says_how_it_broke_the_tie(in_process):
    run = in_process(
        scripted(
            {agent_id: [text] for agent_id, text in ANSWERS.items()},
            orchestrator={"decide_by": "agreement", "final_presentation": "reuse"},
        )
    )
    heard: list[RunEvent] = []
    run.app.events.subscribe(heard.append)
    result = run.app.ask(QUESTION)
    assert result.winner == "second" and result.final_answer == "2 + 2 = 4."
    assert (
        result.end_reason
        == "chosen by agreement among 3 answer(s); a tie, broken by likeness to the other answers"
    )
    said = [event.message for event in heard if isinstance(event, Notice) and event.level == "debug"]
    assert any(
        line.startswith(
            "agreement scores: first 0.00, second 0.00, third 0.00; likeness to the others: first "
        )
        for line in said
    )
    assert run.out.getvalue() == "2 + 2 = 4.\n"

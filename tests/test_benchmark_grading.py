"""The embedded default's benchmark grades strictly: an answer is right only when it states the expected
fact, names no rival answer and does not hedge (benchmarks/embedded_default.py)."""

from __future__ import annotations

import pytest

from tests.script_module import load_script

embedded_default = load_script("benchmarks/embedded_default.py")
QUESTION = {question.text: question for question in embedded_default.QUESTIONS}


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the capital of France?", "The capital of France is Paris."),
        ("What is the capital of France?", "Paris, not Lyon."),
        ("What is 2 + 2?", "2 + 2 = 4"),
        ("What is 2 + 2?", "Two plus two is four."),
        ("How many days are in a week?", "There are 7 days in a week."),
        ("What is the opposite of hot?", "The opposite of hot is cold."),
        ("Which animal says meow?", "A cat says meow."),
    ],
)
def test_an_answer_that_states_the_fact_is_right(question: str, answer: str):
    assert embedded_default.is_right(answer, QUESTION[question])


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the capital of France?", "It is not Paris, it is Lyon."),  # negated
        ("What is the capital of France?", "It could be Paris."),  # hedged
        ("What is the capital of France?", "Paris or Lyon."),  # a rival named too
        ("What is 2 + 2?", "The answer is 2."),  # only the question's own number
        ("What is 2 + 2?", "Two and two are equal."),
        ("What is 2 + 2?", "2 + 2 = 5, or 4"),
        ("How many days are in a week?", "A week has 5 days, or 7."),
        ("What is the largest planet in our solar system?", "Saturn is the largest, then Jupiter."),
        ("What colour is grass?", "Grass is green or yellow."),
        ("What colour is snow?", "(exit 1) error: no answer"),
    ],
)
def test_a_wrong_hedged_or_mixed_answer_is_wrong(question: str, answer: str):
    assert not embedded_default.is_right(answer, QUESTION[question])


ANSWERED = [  # what the embedded default answered, and whether it is right
    ("What is 10 - 4?", "10 - 4 = 2", False),
    (
        "What is 5 times 3?",
        "To solve this problem, we need to find a common denominator for 5 and 3. We can do this by dividing "
        "both the numerator and denominator of 5*3 by 3, which gives us 10. So, 5 * 3 = 15 becomes 2 times "
        "itself in 6 steps (the original problem).",
        False,
    ),
    (
        "What is the largest planet in our solar system?",
        "The largest exoplanet, Kepler-186f, is estimated to be approximately 20 times larger than Earth and "
        "has a mass of about 14% that of Jupiter's.",
        False,
    ),
    (
        "What colour is the sky on a clear day?",
        "The sky on a clear day is typically a deep, deep blue, with a hint of pink and orange.",
        False,
    ),
    ("How many days are in a week?", "A day is 24 hours, and a week is 7 days.", True),
    (
        "What do bees make?",
        "Bees make a wide range of products, including honey, wax, and pollen, which they collect from "
        "flowers.",
        True,
    ),
    ("What is 3 + 5?", "To add 3 and 5, you simply add them together: 3 + 5 = 8.", True),
]


@pytest.mark.parametrize(("question", "answer", "right"), ANSWERED)
def test_the_embedded_default_s_answers_grade_as_a_reader_grades_them(
    question: str, answer: str, right: bool
):
    assert embedded_default.is_right(answer, QUESTION[question]) is right

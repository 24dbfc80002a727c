"""The few-shot answer label a small model copies: found only in a prompt whose examples pair labels,
and cut only from the start of the reply, however the reply is split into pieces."""

from __future__ import annotations

import pytest

from massgen_cli.backends.local_prompt import LabelCut, example_answer_label
from massgen_cli.messages import Message

PAIRED = """Answer the question in one short sentence. Examples:
Q: What is the capital of Peru?
A: The capital of Peru is Lima.
Q: What is 6 + 1?
A: 6 + 1 = 7."""


def system(text: str) -> list[Message]:
    return [{"role": "system", "content": text}, {"role": "user", "content": "What is 2+2?"}]


def cut(label: str, pieces: list[str]) -> str:
    cutter = LabelCut(label)
    return "".join(cutter.feed(piece) for piece in pieces) + cutter.flush()


def test_the_answer_label_is_the_second_of_alternating_example_labels():
    assert example_answer_label(system(PAIRED)) == "A"
    chat = "Examples:\nUser: Hi?\nYou: Hello.\nUser: Bye?\nYou: Goodbye."
    assert example_answer_label(system(chat)) == "You"


@pytest.mark.parametrize(
    "prompt",
    [
        "Answer the question in one short sentence.",
        "Examples:\nQ: What is 6 + 1?\n6 + 1 = 7.\nQ: Is ice cold?\nYes.",  # as the shipped default
        "Examples:\nQ: What is 6 + 1?\nA: 7.",  # one pair is not a pattern
        "Note: be brief.\nQ: What is 6 + 1?\nA: 7.\nQ: Is ice cold?\nA: Yes.",  # another labelled line
    ],
)
def test_no_label_without_a_clear_pattern_of_paired_examples(prompt):
    assert example_answer_label(system(prompt)) == ""


def test_only_system_messages_count():
    messages: list[Message] = [{"role": "user", "content": PAIRED}]
    assert example_answer_label(messages) == ""


def test_the_label_leaked_by_the_model_is_cut_however_the_reply_is_split():
    assert cut("A", ["A: 2 + 2 = 4."]) == "2 + 2 = 4."
    assert cut("A", ["A", ":", " ", " 2 + 2", " = 4."]) == "2 + 2 = 4."
    assert cut("A", [" A:", "\n", "", "A lemon is yellow."]) == "A lemon is yellow."


def test_text_that_does_not_start_with_the_label_passes_unchanged():
    assert cut("A", ["A snowflake is white."]) == "A snowflake is white."
    assert cut("A", ["A", " week is 7 days."]) == "A week is 7 days."
    assert cut("A", ["The answer: A: yes."]) == "The answer: A: yes.", "only the start is cut"
    assert cut("A", ["A"]) == "A", "a reply shorter than the label goes out as it was"
    assert cut("", ["A: kept, no examples taught it"]) == "A: kept, no examples taught it"

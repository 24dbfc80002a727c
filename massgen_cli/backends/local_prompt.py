"""A label a small model copies from its few-shot examples, cut where the model writes it.

A system prompt with examples as labelled pairs ("Q: What is 6 + 1?" then "A: 6 + 1 = 7.") teaches a
135M model to start its own answer with the answer label: it answered "A: 2 + 2 = 4.". The shipped
default labels only its questions, so the model has no answer label to copy; for a user's prompt that
labels both, the local backend cuts the answer label from the start of a plain-text reply, and only
then: the label is the model's artefact of that prompt, never text of the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from massgen_cli.messages import Message

LABELLED_LINE = re.compile(r"^[ \t]*([A-Za-z][A-Za-z ]{0,14}):[ \t]", re.MULTILINE)


def example_answer_label(messages: Sequence[Message]) -> str:
    """The label that starts the answer lines of the system prompt's examples ("A" when every labelled
    line alternates "Q: …" and "A: …", at least twice), or "" when there is no such pair of labels."""
    text = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    labels = LABELLED_LINE.findall(text)
    if len(labels) < 4 or len(labels) % 2:
        return ""
    question, answer = labels[0], labels[1]
    alternating = labels == [question, answer] * (len(labels) // 2)
    return answer if alternating and question != answer else ""


class LabelCut:
    """Cuts ``label:`` and the spaces after it from the start of a text that arrives in pieces; the
    rest passes unchanged. A text that does not start with the label is held only until that is clear."""

    def __init__(self, label: str):
        self.prefix = f"{label}:" if label else ""
        self.held = ""
        self.state = "deciding" if label else "open"

    def feed(self, piece: str) -> str:
        """What of the text so far can go out now."""
        if self.state == "open":
            return piece
        self.held += piece
        if self.state == "deciding":
            start = self.held.lstrip()
            if len(start) < len(self.prefix) and self.prefix.startswith(start):
                return ""  # too short to tell yet
            if not start.startswith(self.prefix):
                return self._open(self.held)
            self.held, self.state = start[len(self.prefix) :], "trimming"
        rest = self.held.lstrip()
        return self._open(rest) if rest else ""

    def flush(self) -> str:
        """What is held at the end of the text (a reply shorter than the label goes out as it was)."""
        return self._open(self.held if self.state == "deciding" else "")

    def _open(self, text: str) -> str:
        self.held, self.state = "", "open"
        return text

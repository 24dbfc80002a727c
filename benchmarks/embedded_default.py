"""Does the embedded default answer right? Short factual questions with one-word answers, each asked as a
new user would: ``massgen -q QUESTION`` with no config and a fresh state folder.

Graded strictly: an answer is right only when it states the expected fact (the word, or an accepted
spelling of it, as a whole word, and not negated as in "not Paris"), names no rival answer of the same
kind (another city, number, colour, planet...; a number the question itself holds does not count), and
does not hedge ("maybe", "I think", "could be"...). An answer that names Paris and Lyon as the capital,
or that says 2 + 2 is 2 before it says 4, is wrong.

Usage: python benchmarks/embedded_default.py [--questions N] [--show]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

CITIES = (
    "Paris", "Lyon", "Marseille", "Nice", "Tokyo", "Kyoto", "Osaka", "Rome", "Milan", "Venice", "Florence",
    "Naples", "Berlin", "Munich", "Hamburg", "Frankfurt", "Bonn", "Madrid", "Barcelona", "Seville",
    "Valencia", "London", "Manchester", "Birmingham", "Liverpool", "Edinburgh", "Vienna", "Brussels",
    "Amsterdam", "Lisbon", "Athens", "Moscow", "Beijing", "Washington", "Ottawa", "Canberra",
)  # fmt: skip
NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)  # fmt: skip
COLOURS = (
    "blue", "green", "white", "yellow", "red", "orange", "purple", "violet", "black", "grey", "gray",
    "brown", "pink",
)  # fmt: skip
PLANETS = ("Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune", "Pluto")
ANIMALS = ("cat", "dog", "cow", "pig", "sheep", "horse", "duck", "bird", "lion", "tiger", "mouse", "goat")
HEDGES = re.compile(
    r"\b(maybe|perhaps|possibly|probably|might|may be|could be|not sure|unsure|i think|i believe|"
    r"i guess|i don't know|i do not know|not certain|unknown|it depends)\b",
    re.IGNORECASE,
)
NEGATION_BEFORE = re.compile(r"\b(not|no|never|isn't|aren't|wasn't|nor)\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
NUMBER = rf"\b(\d+(?:\.\d+)?|{'|'.join(NUMBER_WORDS)})\b"


@dataclass(frozen=True)
class Question:
    """A question, the accepted spellings of its answer, and the wrong answers of the same kind."""

    text: str
    expected: tuple[str, ...]
    rivals: tuple[str, ...] = ()
    numeric: bool = False
    unit: str = ""
    """For a number: the word a rival number is followed by (``days``); empty, any other number."""


def _number(text: str, answer: int, unit: str = "") -> Question:
    """A question whose answer is ``answer``: its digits or its word; another number (of ``unit``, when
    given) is a rival."""
    return Question(text, (str(answer), NUMBER_WORDS[answer]), numeric=True, unit=unit)


def _of(text: str, answer: str, kind: tuple[str, ...], *also: str) -> Question:
    """A question whose answer is ``answer`` (or ``also``); the others of ``kind`` are rivals."""
    accepted = (answer, *also)
    return Question(text, accepted, tuple(word for word in kind if word not in accepted))


QUESTIONS: list[Question] = [
    _of("What is the capital of France?", "Paris", CITIES),
    _of("What is the capital of Japan?", "Tokyo", CITIES),
    _of("What is the capital of Italy?", "Rome", CITIES),
    _of("What is the capital of Germany?", "Berlin", CITIES),
    _of("What is the capital of Spain?", "Madrid", CITIES),
    _of("What is the capital of England?", "London", CITIES),
    _number("What is 2 + 2?", 4),
    _number("What is 3 + 5?", 8),
    _number("What is 10 - 4?", 6),
    _number("What is 5 times 3?", 15),
    _of("What colour is the sky on a clear day?", "blue", COLOURS),
    _of("What colour is grass?", "green", COLOURS),
    _of("What colour is snow?", "white", COLOURS),
    _of("What colour is a ripe banana?", "yellow", COLOURS),
    _number("How many days are in a week?", 7, unit="days?"),
    _of("What is the opposite of hot?", "cold", ("warm", "cool", "mild", "hot")),
    _of("Which animal says meow?", "cat", ANIMALS, "cats", "kitten"),
    _of("What do bees make?", "honey", ("milk", "silk", "butter", "sugar", "jam", "cheese")),
    _of("What is frozen water called?", "ice", ("snow", "steam", "vapour", "vapor", "hail", "frost")),
    _of("What is the largest planet in our solar system?", "Jupiter", PLANETS),
]


def is_right(answer: str, question: Question) -> bool:
    """Whether ``answer`` states the expected fact, names no rival and does not hedge (see the module)."""
    stated = [word for word in question.expected if _said(word, answer)]
    return bool(stated) and not HEDGES.search(answer) and not _names_a_rival(answer, question)


def _said(word: str, answer: str) -> bool:
    """Whether ``answer`` says ``word`` (a whole word) at least once without a negation just before it."""
    return any(not NEGATION_BEFORE.search(answer[: m.start()]) for m in _whole_word(word).finditer(answer))


def _names_a_rival(answer: str, question: Question) -> bool:
    asked = question.text
    if question.numeric:  # a number but the answer and those of the question
        named = _numbers(answer, question.unit)
        return bool(named - _numbers(" ".join(question.expected)) - _numbers(asked))
    rivals = [word for word in question.rivals if not _whole_word(word).search(asked)]
    return any(_said(word, answer) for word in rivals)


def _numbers(text: str, unit: str = "") -> set[float]:
    """The numbers ``text`` names, as digits or as words (only those followed by ``unit``, if given)."""
    pattern = NUMBER + (rf"(?=\s+{unit}\b)" if unit else "")
    found = (match.group(1).lower() for match in re.finditer(pattern, text, re.IGNORECASE))
    return {float(NUMBER_WORDS.index(n)) if n in NUMBER_WORDS else float(n) for n in found}


def _whole_word(word: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)


def ask(question: str, state_dir: str) -> str:
    """The final answer of one question asked with no config (stdout of a quiet run)."""
    run = subprocess.run(
        [sys.executable, "-m", "massgen_cli", "-q", question],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=state_dir,
        env={**os.environ, "MASSGEN_HOME": state_dir, "MEM0_TELEMETRY": "False"},
    )
    return run.stdout.strip() if run.returncode == 0 else f"(exit {run.returncode}) {run.stderr[-300:]}"


def embedded_default_correct(count: int | None = None, show: bool = False) -> dict[str, float]:
    """Ask the first ``count`` questions (all by default); how many were right, of how many asked, and
    the seconds per question."""
    chosen = QUESTIONS[: count or len(QUESTIONS)]
    right, started = 0, time.perf_counter()
    for question in chosen:
        with tempfile.TemporaryDirectory(prefix="massgen-default-") as state_dir:
            answer = ask(question.text, state_dir)
        ok = is_right(answer, question)
        right += ok
        if show:
            print(f"{'✓' if ok else '✗'} {question.text} -> {answer[:160]!r}", flush=True)
    return {
        "embedded_default_right": right,
        "embedded_default_asked": len(chosen),
        "embedded_default_right_fraction": round(right / len(chosen), 3),
        "embedded_default_seconds_per_question": round((time.perf_counter() - started) / len(chosen), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--show", action="store_true", help="print each question and answer")
    args = parser.parse_args()
    figures = embedded_default_correct(args.questions, args.show)
    for name, value in figures.items():
        print(f"{name}: {value}")
    print(f"right: {figures['embedded_default_right']:g} of {figures['embedded_default_asked']:g} asked")


if __name__ == "__main__":
    main()

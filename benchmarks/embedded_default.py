"""Does the embedded default answer right? Short factual questions with one-word answers, each asked as a
new user would: ``massgen -q QUESTION`` with no config and a fresh state folder. A final answer counts
when it contains the expected word (or an accepted spelling of it) as a whole word.

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

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("What is the capital of France?", ("Paris",)),
    ("What is the capital of Japan?", ("Tokyo",)),
    ("What is the capital of Italy?", ("Rome",)),
    ("What is the capital of Germany?", ("Berlin",)),
    ("What is the capital of Spain?", ("Madrid",)),
    ("What is the capital of England?", ("London",)),
    ("What is 2 + 2?", ("4", "four")),
    ("What is 3 + 5?", ("8", "eight")),
    ("What is 10 - 4?", ("6", "six")),
    ("What is 5 times 3?", ("15", "fifteen")),
    ("What colour is the sky on a clear day?", ("blue",)),
    ("What colour is grass?", ("green",)),
    ("What colour is snow?", ("white",)),
    ("What colour is a ripe banana?", ("yellow",)),
    ("How many days are in a week?", ("7", "seven")),
    ("What is the opposite of hot?", ("cold",)),
    ("Which animal says meow?", ("cat", "cats", "kitten")),
    ("What do bees make?", ("honey",)),
    ("What is frozen water called?", ("ice",)),
    ("What is the largest planet in our solar system?", ("Jupiter",)),
]


def is_right(answer: str, accepted: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(word)}\b", answer, re.IGNORECASE) for word in accepted)


def ask(question: str, state_dir: str) -> str:
    """The final answer of one question asked with no config (stdout of a quiet run)."""
    run = subprocess.run(
        [sys.executable, "-m", "massgen_cli", "-q", question],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "MASSGEN_HOME": state_dir, "MEM0_TELEMETRY": "False"},
    )
    return run.stdout.strip() if run.returncode == 0 else f"(exit {run.returncode}) {run.stderr[-300:]}"


def embedded_default_correct(count: int | None = None, show: bool = False) -> dict[str, float]:
    """Ask the first ``count`` questions (all by default); the number right, of how many, and seconds."""
    chosen = QUESTIONS[: count or len(QUESTIONS)]
    right, started = 0, time.perf_counter()
    for question, accepted in chosen:
        with tempfile.TemporaryDirectory(prefix="massgen-default-") as state_dir:
            answer = ask(question, state_dir)
        ok = is_right(answer, accepted)
        right += ok
        if show:
            print(f"{'✓' if ok else '✗'} {question} -> {answer[:120]!r}", flush=True)
    return {
        "embedded_default_correct": right,
        "embedded_default_asked": len(chosen),
        "embedded_default_seconds_per_question": round((time.perf_counter() - started) / len(chosen), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--show", action="store_true", help="print each question and answer")
    args = parser.parse_args()
    for name, value in embedded_default_correct(args.questions, args.show).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()

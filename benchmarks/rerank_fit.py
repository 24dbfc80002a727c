"""Fits the weights of the hybrid search's second stage (``massgen_cli.memory.longterm.retrieve.rerank``)
on LoCoMo's development conversations, and judges them on conversations they were not fitted on.

Usage: python benchmarks/rerank_fit.py [--data FILE] [--l2 0.01]

Each conversation is imported as ``benchmarks/real_dialogues.py`` imports it; every question of
categories 1-4 is asked, and the first ``rerank.DEPTH`` memories of its fused ranking (before the
re-ranking) are kept with their ``rerank.features`` and whether each is an evidence turn. A logistic
regression (one memory a row, the evidence rows weighed up to as many as the others, L2 ``--l2``) is
fitted on four conversations and ranks the fifth, for each of the five in turn: any@1/@5/@10 and
session@10 of those rankings, overall and per category, against the fused ranking alone, say how
far the weights hold on conversations they did not see. Then the weights fitted on all five are
printed as ``rerank.WEIGHTS`` takes them (each feature's weight over its spread, so no scaling is
needed when ranking). Absent data is said, and the script ends with exit 0.

With ``--l2 0.01``, judged on the conversation left out each time (760 questions): any@1 / @5 / @10 /
session@10 0.511 / 0.809 / 0.861 / 0.951, against 0.443 / 0.767 / 0.843 / 0.954 for the fused ranking
alone; fitted on all five and ranking them, 0.507 / 0.808 / 0.859 / 0.951. ``rerank.WEIGHTS`` holds
the weights fitted on all five.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from real_dialogues import CATEGORIES, DEFAULT_DATA, Question, imported, read_conversations, session_of

KS = (1, 5, 10)


@dataclass
class Asked:
    """One question: the dia_ids of its fused ranking's first memories, their features, and the rest."""

    conversation: int
    question: Question
    head: list[str]
    rows: np.ndarray
    tail: list[str]


def collect(data: Path) -> list[Asked]:
    """Every question's fused ranking and its head's features, the re-ranking left out."""
    from massgen_cli.memory.longterm.retrieve import rerank
    from massgen_cli.memory.longterm.store import searching
    from massgen_cli.memory.longterm.store.vector_stores import close_clients

    seen: list[tuple[list[str], list[tuple[float, ...]]]] = []

    def fused(ranked: list[tuple[str, float]], candidates: Any, words: Any, when: bool) -> Any:
        head = [memory_id for memory_id, _ in ranked[: rerank.DEPTH] if memory_id in candidates]
        seen.append((head, rerank.features(head, candidates, words, when)))
        return ranked

    searching.reranked = fused  # type: ignore[assignment]
    found = []
    for conversation in read_conversations(data):
        with tempfile.TemporaryDirectory() as folder:
            store, scope = imported(conversation, Path(folder))
            dia_of = {
                memory.id: str(memory.first.extra.get("dia_id", "")) for memory in store.list_memories()
            }
            for question in conversation.questions:
                seen.clear()
                hits = store.search(question.text, limit=100, scope=scope)
                head, rows = seen[0]
                ids = [dia_of[memory_id] for memory_id in head]
                tail = [str(hit.to_json()["metadata"].get("dia_id")) for hit in hits]
                tail = [dia_id for dia_id in tail if dia_id not in ids]
                found.append(Asked(conversation.number, question, ids, np.array(rows), tail))
            store.close()
            close_clients()
        print(f"conversation {conversation.number}: {len(conversation.questions)} questions", file=sys.stderr)
    return found


def fit(asked: list[Asked], l2: float) -> np.ndarray:
    """Logistic regression's weights over the features divided by their spread (so they rank raw
    features); the evidence rows weighed up to as many as the others."""
    x = np.vstack([a.rows for a in asked])
    y = np.concatenate([[float(d in a.question.evidence) for d in a.head] for a in asked])
    mean, spread = x.mean(0), x.std(0) + 1e-9
    scaled = (x - mean) / spread
    weights, bias = np.zeros(x.shape[1]), 0.0
    balance = np.where(y > 0, (len(y) - y.sum()) / max(y.sum(), 1), 1.0)
    balance /= balance.mean()
    for _ in range(400):
        error = (1 / (1 + np.exp(-(scaled @ weights + bias))) - y) * balance
        weights -= 0.5 * (scaled.T @ error / len(y) + l2 * weights)
        bias -= 0.5 * error.mean()
    return np.asarray(weights / spread)


def ranked(one: Asked, weights: np.ndarray | None) -> list[str]:
    if weights is None:
        return one.head + one.tail
    sums = one.rows @ weights
    return [one.head[i] for i in sorted(range(len(one.head)), key=lambda i: -sums[i])] + one.tail


def figures(asked: list[Asked], weights_for: Any) -> dict[Any, float]:
    found: dict[Any, int] = defaultdict(int)
    counted: dict[Any, int] = defaultdict(int)
    for one in asked:
        order = ranked(one, weights_for(one))
        sessions = one.question.sessions
        for category in ("all", one.question.category):
            counted[category] += 1
            for k in KS:
                found[(category, k)] += bool(one.question.evidence.intersection(order[:k]))
            found[(category, "s")] += bool(sessions.intersection(session_of(d) for d in order[:10]))
    return {key: found[key] / counted[key[0]] for key in found}


def show(label: str, shares: dict[Any, float]) -> None:
    def row(category: Any) -> str:
        return " / ".join(f"{shares[(category, k)]:.3f}" for k in (*KS, "s"))

    print(f"{label}: any@1 / @5 / @10 / session@10  {row('all')}")
    for category, name in CATEGORIES.items():
        print(f"    {name:<12} {row(category)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--l2", type=float, default=0.01)
    args = parser.parse_args()
    if not args.data.resolve().is_file():
        print(f"the real conversations are not here ({args.data}): nothing fitted")
        return
    asked = collect(args.data.resolve())
    show("fused ranking alone", figures(asked, lambda one: None))
    left_out = {
        number: fit([a for a in asked if a.conversation != number], args.l2)
        for number in sorted({a.conversation for a in asked})
    }
    show(
        "re-ranked, each conversation by weights fitted on the others",
        figures(asked, lambda one: left_out[one.conversation]),
    )
    weights = fit(asked, args.l2)
    show(
        "re-ranked by the weights fitted on all (fitted on what they rank)",
        figures(asked, lambda one: weights),
    )
    from massgen_cli.memory.longterm.retrieve.rerank import FEATURES

    print("WEIGHTS = (" + ", ".join(f"{w:.4g}" for w in weights) + ")  # " + ", ".join(FEATURES))


if __name__ == "__main__":
    main()

"""Long-term retrieval side by side: dense, lexical and hybrid ranking, each conversation alone in a
store and crowded among others (search latency as the store grows: server_ranking.py).

Usage: python benchmarks/retrieval_recall.py [--dialogues N] [--people N] [--chatter N] [--k 1 5 10]
                                             [--crowd N]
Builds fresh stores in a temporary folder with the offline embedder.

Dialogues (the long-conversation set of long_dialogues.py, imported as ``massgen memory import`` does):
any@k, the share of questions whose evidence turn is among the top k of a search scoped to its own
conversation, for dense, lexical and hybrid, and for hybrid with the turns recorded just before and
after each hit (``hybrid+context``), with each conversation alone in a store and with all
``--dialogues`` in one; how many questions' top-10 lists differ between the two (a session's results
should not depend on other sessions), and how many hybrid top 10s differ between ``--limit 10`` and
``--limit 100`` (a result should not depend on the limit). The ranking's choices (the fusion, the text
each half indexes, the names) were made on other conversations of the set (seeds 100 to 109) before
these (seeds 300 and up) were measured. Then the forms of indexed text, embedded alone (dense any@k
within each conversation).

Synthetic facts: the synthetic set's facts
are planted among chatter (imported turns with a speaker and a date) and each question is asked of its
own session, first with the conversation alone in the store, then with ``--crowd`` other
conversations on the same topics beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("MEM0_TELEMETRY", "False")

from long_dialogues import Dialogue, build_dialogue, load_dialogue, ranked_evidence
from synthetic_conversations import build_conversation, load_into, recall_at

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients

METHODS = ("dense", "lexical", "hybrid")
REPORTED_SEEDS = 300
"""The dialogues reported start at this seed; the ranking's choices were made on seeds 100 to 109."""
TARGET = "conversation_0"


def open_store(folder: str, settings: PersistentMemoryConfig | None = None) -> PersistentMemory:
    settings = settings or PersistentMemoryConfig(enabled=True)
    return PersistentMemory(settings, Path(folder), domain="bench", task_type="recall")


def recall_table(store: PersistentMemory, conversation, ks: list[int]) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    return {method: [recall_at(store, conversation, k, method, TARGET) for k in ks] for method in METHODS}


def print_table(title: str, table: dict[str, list[float]], ks: list[int]) -> None:
    print(f"\n{title}")
    width = max(8, *(len(name) for name in table))
    print(f"{'method':<{width}}" + "".join(f"  recall@{k:<3}" for k in ks))
    for method, values in table.items():
        print(f"{method:<{width}}" + "".join(f"  {value:>9.3f}" for value in values))


def recall_tables(
    people: int, chatter: int, ks: list[int], crowd: int, *, quiet: bool = False
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Recall@k of each method with the conversation alone, then among ``crowd`` others."""
    conversation = build_conversation(people, chatter)
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(folder)
        started = time.perf_counter()
        load_into(store, conversation, TARGET)
        if not quiet:
            print(
                f"{len(conversation.messages)} memories loaded in {time.perf_counter() - started:.1f}s; "
                f"{len(conversation.probes)} questions"
            )
        alone = recall_table(store, conversation, ks)
        for number in range(1, crowd + 1):
            load_into(store, build_conversation(people, chatter, seed=100 + number), f"conversation_{number}")
        crowded = recall_table(store, conversation, ks)
        if not quiet:
            print(f"crowded: {store.index.count()} memories, {crowd} other conversations")
        store.close()
        close_clients()
    return alone, crowded


WITH_CONTEXT = "hybrid+context"
"""Hybrid, each hit counted with the turns recorded just before and after it (``CONTEXT_TURNS``)."""
CONTEXT_TURNS = 1
ROWS = (*METHODS, WITH_CONTEXT)
LIMIT_CHECKED = 100
"""Each question's hybrid top 10 is also asked for with this limit: the lists must be the same."""


@dataclass
class DialogueFigures:
    """any@k per row (``ROWS``), alone and crowded; per method how many questions' top 10 changed
    between alone and crowded; how many hybrid top 10s changed with the limit."""

    ks: list[int]
    questions: int = 0
    alone: dict[str, list[float]] = field(default_factory=dict)
    crowded: dict[str, list[float]] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    limit_changed: int = 0

    def worst_fusion_ratio(self) -> float:
        """The least, over k and both stores, of hybrid over the better of dense and lexical."""
        ratios = [
            table["hybrid"][i] / best if (best := max(table["dense"][i], table["lexical"][i])) else 1.0
            for table in (self.alone, self.crowded)
            for i in range(len(self.ks))
        ]
        return min(ratios)


def dialogue_figures(conversations: int, ks: list[int], first_seed: int = REPORTED_SEEDS) -> DialogueFigures:
    """Each of ``conversations`` dialogues asked alone in its own store and among all in a shared one."""
    dialogues = [build_dialogue(seed) for seed in range(first_seed, first_seed + conversations)]
    figures = DialogueFigures(ks)
    hits = {store: {row: [0] * len(ks) for row in ROWS} for store in ("alone", "crowded")}
    figures.changed = dict.fromkeys(METHODS, 0)
    with tempfile.TemporaryDirectory() as folder:
        shared = open_store(str(Path(folder) / "shared"))
        for number, dialogue in enumerate(dialogues):
            load_dialogue(shared, dialogue, f"dialogue_{number}")
        for number, dialogue in enumerate(dialogues):
            own = open_store(str(Path(folder) / f"alone_{number}"))
            load_dialogue(own, dialogue, f"dialogue_{number}")
            _ask(dialogue, f"dialogue_{number}", {"alone": own, "crowded": shared}, hits, figures)
            own.close()
        shared.close()
        close_clients()
    figures.questions = sum(len(d.questions) for d in dialogues)
    for store, table in hits.items():
        rates = {row: [found / figures.questions for found in counts] for row, counts in table.items()}
        setattr(figures, store, rates)
    return figures


def _ask(dialogue: Dialogue, session: str, stores: dict, hits: dict, figures: DialogueFigures) -> None:  # type: ignore[type-arg]
    """Every question of ``dialogue`` of both stores, by every method (hybrid with the turns around
    each hit), and the crowded hybrid top 10 again with a larger limit."""
    k = max(figures.ks)
    for question in dialogue.questions:
        for method in METHODS:
            context = CONTEXT_TURNS if method == "hybrid" else 0
            ranked = {
                name: ranked_evidence(store, question, session, method, k, context)
                for name, store in stores.items()
            }
            figures.changed[method] += [e for e, _ in ranked["alone"]] != [e for e, _ in ranked["crowded"]]
            for name, evidence in ranked.items():
                _count(hits[name], method, question.evidence, evidence, figures.ks)
        top = [e for e, _ in ranked_evidence(stores["crowded"], question, session, "hybrid", 10)]
        larger = ranked_evidence(stores["crowded"], question, session, "hybrid", 10, limit=LIMIT_CHECKED)
        figures.limit_changed += top != [e for e, _ in larger]


def _count(table: dict, method: str, wanted: str, evidence: list, ks: list[int]) -> None:  # type: ignore[type-arg]
    """Add a question's finds at each k to ``table`` (hybrid also with the turns around each hit)."""
    for i, cut in enumerate(ks):
        shown = evidence[:cut]
        table[method][i] += wanted in {e for e, _ in shown}
        if method == "hybrid":
            table[WITH_CONTEXT][i] += wanted in {e for e, near in shown for e in (e, *near)}


def print_dialogue_figures(figures: DialogueFigures) -> None:
    ks = figures.ks
    print(f"\nlong dialogues: {figures.questions} questions, any@k of a search scoped to the conversation")
    print(f"{'method':<15}" + "".join(f"  alone@{k:<3}" for k in ks) + "".join(f"  crowd@{k:<3}" for k in ks)
          + "  top-10 changed")  # fmt: skip
    for row in ROWS:
        values = [*figures.alone[row], *figures.crowded[row]]
        changed = f"{figures.changed[row]:>14}" if row in figures.changed else ""
        print(f"{row:<15}" + "".join(f"  {value:>9.3f}" for value in values) + f"  {changed}")
    worst = figures.worst_fusion_ratio()
    print(f"hybrid / better of dense and lexical, worst over k and stores: {worst:.3f}")
    print(f"hybrid top 10 of --limit 10 and --limit {LIMIT_CHECKED} differing: {figures.limit_changed}")


FORMS = {
    "date · turn 0 · speaker: text": lambda t: f"{t['timestamp']} · turn 0 · {t['speaker']}: {t['content']}",
    "[date] speaker: text": lambda t: f"[{t['timestamp']}] {t['speaker']}: {t['content']}",
    "speaker: text": lambda t: f"{t['speaker']}: {t['content']}",
    'speaker: "text"': lambda t: f'{t["speaker"]}: "{t["content"]}"',
    "speaker said: text": lambda t: f"{t['speaker']} said: {t['content']}",
    "text (speaker)": lambda t: f"{t['content']} ({t['speaker']})",
    "text — speaker": lambda t: f"{t['content']} — {t['speaker']}",
    "text": lambda t: t["content"],
}


def form_table(conversations: int, ks: list[int]) -> dict[str, list[float]]:
    """Dense any@k of each form of indexed text, by the offline embedder alone (no store)."""
    import numpy as np

    from massgen_cli.memory.longterm.store.embedder import shared_local_embedder

    embedder = shared_local_embedder()
    dialogues = [build_dialogue(seed) for seed in range(conversations)]
    table = {name: [0.0] * len(ks) for name in FORMS}
    total = sum(len(d.questions) for d in dialogues)
    for dialogue in dialogues:
        questions = np.asarray(embedder.embed_many([q.text for q in dialogue.questions]))
        for name, form in FORMS.items():
            turns = np.asarray(embedder.embed_many([form(t) for t in dialogue.turns]))
            order = np.argsort(-(questions @ turns.T), axis=1)
            for row, question in enumerate(dialogue.questions):
                ranked = [dialogue.turns[i]["dia_id"] for i in order[row][: max(ks)]]
                for i, k in enumerate(ks):
                    table[name][i] += (question.evidence in ranked[:k]) / total
    return table


def dialogues(args: argparse.Namespace) -> None:
    print_dialogue_figures(dialogue_figures(args.dialogues, args.k))
    print_table("forms of indexed text, dense alone (any@k)", form_table(args.dialogues, args.k), args.k)


def recall(args: argparse.Namespace) -> None:
    alone, crowded = recall_tables(args.people, args.chatter, args.k, args.crowd)
    print_table("alone", alone, args.k)
    print_table("crowded", crowded, args.k)
    print(
        "\ncrowded - alone, hybrid:"
        + "".join(f"  {c - a:+.3f}" for c, a in zip(crowded["hybrid"], alone["hybrid"], strict=True))
    )
    best_single = [max(d, lex) for d, lex in zip(crowded["dense"], crowded["lexical"], strict=True)]
    print(
        "hybrid / best single:  "
        + "".join(
            f"  {h / b if b else float('inf'):.2f}x"
            for h, b in zip(crowded["hybrid"], best_single, strict=True)
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dialogues", type=int, default=10, help="conversations of the long-dialogue set")
    parser.add_argument("--people", type=int, default=40)
    parser.add_argument("--chatter", type=int, default=12, help="most chatter lines before each fact")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 5, 10])
    parser.add_argument("--crowd", type=int, default=9, help="other conversations beside the one asked")
    args = parser.parse_args()
    dialogues(args)
    recall(args)


if __name__ == "__main__":
    main()

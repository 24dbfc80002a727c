"""Long-term retrieval side by side: recall of dense, lexical and hybrid ranking, recall of one
conversation alone and crowded among others, and search latency as the store grows.

Usage: python benchmarks/retrieval_recall.py [--people N] [--chatter N] [--k 1 5 10]
                                             [--crowd N] [--sizes 1000 10000 50000] [--queries N]
Builds fresh stores in a temporary folder with the offline embedder. Recall: the synthetic set's facts
are planted among chatter (imported turns with a speaker and a date) and each question is asked of its
own session, first with the conversation alone in the store, then with ``--crowd`` other
conversations on the same topics beside it. Latency: session-scoped hybrid searches (real query
embeddings) over stores of each size; those rows are written to the index directly, since searches
read only the index.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("MEM0_TELEMETRY", "False")

from synthetic_conversations import build_conversation, fill_index, load_into, recall_at

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients

METHODS = ("dense", "lexical", "hybrid")
TARGET = "conversation_0"


def open_store(folder: str, settings: PersistentMemoryConfig | None = None) -> PersistentMemory:
    settings = settings or PersistentMemoryConfig(enabled=True)
    return PersistentMemory(settings, Path(folder), domain="bench", task_type="recall")


def recall_table(store: PersistentMemory, conversation, ks: list[int]) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    return {method: [recall_at(store, conversation, k, method, TARGET) for k in ks] for method in METHODS}


def print_table(title: str, table: dict[str, list[float]], ks: list[int]) -> None:
    print(f"\n{title}")
    print(f"{'method':<8}" + "".join(f"  recall@{k:<3}" for k in ks))
    for method, values in table.items():
        print(f"{method:<8}" + "".join(f"  {value:>9.3f}" for value in values))


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


def latency_table(
    sizes: list[int], queries: int, settings: PersistentMemoryConfig | None = None
) -> dict[int, tuple[float, float]]:
    """p50 and p95 ms of session-scoped hybrid searches over stores of each size (on ``settings``'
    vector store; the rows go to the index directly, since searches rank in the index)."""
    questions = [probe.question for probe in build_conversation(40, 12).probes]
    table = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            store = open_store(folder, settings)
            fill_index(store, size)
            store.search("warm up", limit=5, scope=SearchFilter(session_id="filler_1"))
            times = []
            for number in range(queries):
                started = time.perf_counter()
                store.search(
                    questions[number % len(questions)],
                    limit=5,
                    scope=SearchFilter(session_id=f"filler_{number % 10}"),
                )
                times.append((time.perf_counter() - started) * 1000)
            table[size] = (statistics.median(times), statistics.quantiles(times, n=20)[18])
            store.close()
            close_clients()
    return table


def latency(args: argparse.Namespace) -> None:
    print(f"\nsession-scoped hybrid search latency ({args.queries} queries each)")
    print(f"{'memories':>9}  {'p50 ms':>7}  {'p95 ms':>7}")
    for size, (p50, p95) in latency_table(args.sizes, args.queries).items():
        print(f"{size:>9}  {p50:>7.1f}  {p95:>7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--people", type=int, default=40)
    parser.add_argument("--chatter", type=int, default=12, help="most chatter lines before each fact")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 5, 10])
    parser.add_argument("--crowd", type=int, default=9, help="other conversations beside the one asked")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    recall(args)
    latency(args)


if __name__ == "__main__":
    main()

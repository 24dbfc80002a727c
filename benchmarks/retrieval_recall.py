"""Retrieval recall on the synthetic long-conversation set: dense, lexical and hybrid, side by side.

Usage: python benchmarks/retrieval_recall.py [--people N] [--chatter N] [--k 1 5 10]
Builds a fresh store in a temporary folder with the offline embedder, plants the facts among
chatter, asks each question, and prints recall@k for each method and the hybrid / dense ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("MEM0_TELEMETRY", "False")

from synthetic_conversations import build_conversation, load_into, recall_at

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.persistent import PersistentMemory
from massgen_cli.memory.longterm.stores import close_clients

METHODS = ("dense", "lexical", "hybrid")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--people", type=int, default=40)
    parser.add_argument("--chatter", type=int, default=12, help="most chatter lines before each fact")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 5, 10])
    args = parser.parse_args()
    conversation = build_conversation(args.people, args.chatter)
    with tempfile.TemporaryDirectory() as folder:
        store = PersistentMemory(
            PersistentMemoryConfig(enabled=True), Path(folder), domain="bench", task_type="recall"
        )
        started = time.perf_counter()
        load_into(store, conversation)
        loaded = time.perf_counter() - started
        size = len(conversation.messages)
        print(f"{size} memories loaded in {loaded:.1f}s; {len(conversation.probes)} questions")
        print(f"{'method':<8}" + "".join(f"  recall@{k:<3}" for k in args.k))
        table = {method: [recall_at(store, conversation, k, method) for k in args.k] for method in METHODS}
        for method, values in table.items():
            print(f"{method:<8}" + "".join(f"  {value:>9.3f}" for value in values))
        ratios = [h / d if d else float("inf") for h, d in zip(table["hybrid"], table["dense"], strict=True)]
        print("hybrid / dense" + "".join(f"  {ratio:>6.2f}x" for ratio in ratios))
        store.close()
        close_clients()


if __name__ == "__main__":
    main()

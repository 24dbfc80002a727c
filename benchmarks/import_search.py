"""What a user waits for at the command line with long-term memory: ``massgen memory import`` (turns per
second into the local default store and into PostgreSQL, and the import's peak RSS, also of a file of
50 long lines of 1 MB made here) and ``massgen memory search`` on a 10k store (seconds from the shell
to the answer, start-up included).

The turns are the synthetic conversations' (``synthetic_conversations.py``: two speakers, dated, facts
among chatter), one conversation per session. Each figure is the median of ``--runs`` runs of the
command in a process of its own. ``--against TREE`` measures the same commands with another source tree
of massgen-cli first on ``PYTHONPATH`` (e.g. an export of the main branch), interleaved run by run with
this one, and prints both with their ratio.

Usage: python benchmarks/import_search.py [--turns 2000] [--store 10000] [--runs 3] [--pgvector URL]
       [--long-mb 50] [--against TREE] [--only import|long|search ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

from synthetic_conversations import build_conversation, records

HERE = Path(__file__).resolve().parent
LOCAL_CONFIG = """agent: {backend: {type: scripted, responses: [x]}}
memory: {enabled: true, persistent_memory: {enabled: true}}
"""
PGVECTOR_CONFIG = """agent: {{backend: {{type: scripted, responses: [x]}}}}
memory:
  enabled: true
  persistent_memory:
    enabled: true
    vector_store: pgvector
    pgvector: {{connection_string: "{url}", collection_name: {collection}}}
"""
QUESTION = "What is Leilani's favourite board game?"


def write_turns(path: Path, turns: int) -> int:
    """``turns`` import lines of synthetic conversations (a session per conversation, a speaker and a
    date per line; nearly every line says something else, 15 to 16 words on average, as in public
    long-conversation sets); how many were written."""
    written, seed = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < turns:
            for number, line in enumerate(records(build_conversation(seed=seed)), start=1):
                if written == turns:
                    break
                row = {"content": line["content"], **line["metadata"], "dia_id": f"D{seed}:{number}"}
                out.write(json.dumps({**row, "session_id": f"talk_{seed}"}) + "\n")
                written += 1
            seed += 1
    return written


def write_long_lines(path: Path, megabytes: int, lines: int, seed: int = 49) -> int:
    """``lines`` lines of ``megabytes`` MB in all, each one long ``content`` of text that does not repeat
    (words drawn at random from 60,000 made-up words of two to four syllables, as a tokenizer meets
    unknown words: several pieces each); how many chunks of stored text they make."""
    import random

    from massgen_cli.memory.longterm.record.memories import chunk_count

    chooser = random.Random(seed)
    syllables = ("ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "da", "shu", "gri", "bel", "tor", "el")
    words = ["".join(chooser.choices(syllables, k=chooser.randint(2, 4))) for _ in range(60_000)]
    size, chunks = megabytes * 1_000_000 // lines, 0
    with path.open("w", encoding="utf-8") as out:
        for number in range(lines):
            text = " ".join(chooser.choices(words, k=size // 6))[:size]
            chunks += chunk_count(text)
            row = {"content": text, "speaker": "Ana", "session_id": f"long_{number % 5}"}
            out.write(json.dumps(row) + "\n")
    return chunks


def compile_trees(trees: dict[str, Path | None]) -> None:
    """Each tree's bytecode compiled, as an installed package has it (an editable install run with
    PYTHONDONTWRITEBYTECODE set compiles every changed module at every start)."""
    import massgen_cli

    for tree in trees.values():
        package = tree / "massgen_cli" if tree else Path(massgen_cli.__file__).parent
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def run_cli(args: list[str], tree: Path | None, state: Path) -> tuple[float, float]:
    """Run ``massgen ARGS`` as a user would; its wall seconds and peak RSS in MB."""
    paths = [str(tree)] if tree else []
    python_path = os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    environment = {**os.environ, "PYTHONPATH": python_path, "MEM0_TELEMETRY": "False"}
    command = [sys.executable, "-m", "massgen_cli", *args, "--state-dir", str(state)]
    started = time.perf_counter()
    state.mkdir(parents=True, exist_ok=True)
    # Run from the state folder: a command started in a source tree would import that tree's package
    # (the current folder comes first on the path of ``-m``) whatever PYTHONPATH says.
    process = subprocess.Popen(
        command, cwd=state, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    problems = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"massgen {' '.join(args)} failed: {problems.decode(errors='replace')[-800:]}")
    return elapsed, usage.ru_maxrss / 1024


def config_file(folder: Path, pgvector_url: str | None) -> Path:
    path = folder / f"config_{uuid.uuid4().hex[:8]}.yaml"
    collection = f"bench_{uuid.uuid4().hex[:10]}"
    text = PGVECTOR_CONFIG.format(url=pgvector_url, collection=collection) if pgvector_url else LOCAL_CONFIG
    path.write_text(text)
    return path


def import_once(folder: Path, data: Path, tree: Path | None, pgvector_url: str | None) -> tuple[float, float]:
    """One import of ``data`` into a new store: seconds and peak RSS (MB)."""
    state = Path(tempfile.mkdtemp(dir=folder))
    config = config_file(folder, pgvector_url)
    return run_cli(["memory", "import", str(data), "--config", str(config)], tree, state)


def import_figures(
    turns: int, runs: int, pgvector_url: str | None, trees: dict[str, Path | None]
) -> dict[str, float]:
    """Turns per second and peak RSS of ``massgen memory import`` of ``turns`` turns into a new local
    store (and, given a URL, a new PostgreSQL collection), median of ``runs``, for each tree (after
    one small import each, which warms the disk cache and the embedder's cached model)."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data, warm = folder / "turns.jsonl", folder / "warm.jsonl"
        written = write_turns(data, turns)
        write_turns(warm, 20)
        for tree in trees.values():
            import_once(folder, warm, tree, None)
        stores = {"local": None, "pgvector": pgvector_url} if pgvector_url else {"local": None}
        for store, url in stores.items():
            measures = {label: partial(import_once, folder, data, tree, url) for label, tree in trees.items()}
            measured = _interleaved(measures, runs)
            for label, results in measured.items():
                seconds = statistics.median(result[0] for result in results)
                figures[f"import_turns_per_s_{store}{label}"] = round(written / seconds, 1)
                figures[f"import_peak_rss_mb_{store}{label}"] = round(max(r[1] for r in results), 1)
    return figures


def long_lines_figures(megabytes: int, trees: dict[str, Path | None]) -> dict[str, float]:
    """Peak RSS of ``massgen memory import`` of a file of ``megabytes`` MB in 50 long lines (one line a
    MB or more when smaller) into a new local store, and its stored chunks per second, for each tree
    (one run each: a 50 MB file takes most of an hour at the embedder's pace)."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = folder / "long_lines.jsonl"
        chunks = write_long_lines(data, megabytes, min(50, megabytes))
        figures["import_long_lines_chunks"] = chunks
        for label, tree in trees.items():
            seconds, peak = import_once(folder, data, tree, None)
            figures[f"import_long_lines_peak_rss_mb{label}"] = round(peak, 1)
            figures[f"import_long_lines_chunks_per_s{label}"] = round(chunks / seconds, 1)
    return figures


FLOOR_SCRIPT = """
import sqlite3, sys
import numpy
from massgen_cli.memory.longterm.store.embedder import LocalEmbedder

query = numpy.asarray(LocalEmbedder().embed(sys.argv[2]), dtype=numpy.float32)
rows = sqlite3.connect(sys.argv[1]).execute("SELECT vector FROM memories WHERE vector IS NOT NULL")
matrix = numpy.frombuffer(b"".join(row[0] for row in rows), dtype=numpy.float32).reshape(-1, query.size)
print(int(numpy.argmax(matrix @ query)))
"""
"""What no search of a local store can go under: a bare script that imports numpy, onnxruntime and the
tokenizer, loads the embedder's cached model, embeds the question, reads every vector of the store's
index and finds the closest (no config, no command line, no lexical ranking, no output to format)."""


def floor_once(state: Path) -> tuple[float, float]:
    command = [sys.executable, "-c", FLOOR_SCRIPT, str(state / "memory" / "index.db"), QUESTION]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, 0.0


def search_figures(size: int, runs: int, trees: dict[str, Path | None]) -> dict[str, float]:
    """Seconds from the shell to the answer of ``massgen memory search`` on a local store of ``size``
    turns (median of ``runs``), for each tree on its own copy of the same store (a store is upgraded
    once by the first search of a tree whose index form differs), and the floor (``FLOOR_SCRIPT``)
    measured in turn with them."""
    import shutil

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = folder / "turns.jsonl"
        write_turns(data, size)
        config = config_file(folder, None)
        built = folder / "built"
        seconds, _ = run_cli(["memory", "import", str(data), "--config", str(config)], None, built)
        figures["search_store_import_s"] = round(seconds, 1)
        states = {}
        for label, tree in trees.items():
            states[label] = folder / f"state{label or '_this'}"
            shutil.copytree(built, states[label])
            run_cli(_search(config), tree, states[label])  # upgrades the copy once, warms the file cache
        measures = {
            label: partial(run_cli, _search(config), tree, states[label]) for label, tree in trees.items()
        }
        measured = _interleaved({**measures, "_floor": partial(floor_once, built)}, runs)
        floor = statistics.median(r[0] for r in measured.pop("_floor"))
        figures["search_floor_s"] = round(floor, 3)
        for label, results in measured.items():
            figures[f"search_cli_s{label}"] = round(statistics.median(r[0] for r in results), 3)
            figures[f"search_cli_peak_rss_mb{label}"] = round(max(r[1] for r in results), 1)
            figures[f"search_cli_over_floor{label}"] = round(figures[f"search_cli_s{label}"] / floor, 2)
    return figures


def _search(config: Path) -> list[str]:
    return ["memory", "search", QUESTION, "--config", str(config), "--limit", "5"]


def _interleaved(
    measures: dict[str, Callable[[], tuple[float, float]]], runs: int
) -> dict[str, list[tuple[float, float]]]:
    """``runs`` results of each measure, taken in turn (so a busy moment falls on all alike)."""
    results: dict[str, list[tuple[float, float]]] = {label: [] for label in measures}
    for _ in range(runs):
        for label, measure in measures.items():
            results[label].append(measure())
    return results


def with_ratios(figures: dict[str, float]) -> dict[str, float]:
    """Each figure measured against the other tree too, with this tree's over the other's."""
    ratios = {
        f"{name}_ratio": round(value / figures[f"{name}_against"], 3)
        for name, value in figures.items()
        if figures.get(f"{name}_against")
    }
    return {**figures, **ratios}


def import_search_figures(quick: bool, pgvector_url: str | None) -> dict[str, float]:
    """The figures ``benchmarks/run.py`` prints: import rate and peak RSS (local and, given a URL,
    PostgreSQL), the peak of an import of 50 MB in 50 long lines (2 MB in 2 with ``quick``), and
    ``memory search`` from the shell on a 10k store (2k with ``quick``)."""
    trees: dict[str, Path | None] = {"": None}
    compile_trees(trees)
    figures = import_figures(1000 if quick else 2000, 3, pgvector_url, trees)
    figures |= long_lines_figures(2 if quick else 50, trees)
    return figures | search_figures(2000 if quick else 10_000, 5 if quick else 9, trees)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--store", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pgvector", help="a PostgreSQL + pgvector URL for the server import figure")
    parser.add_argument("--against", type=Path, help="another source tree, measured side by side")
    parser.add_argument("--long-mb", type=int, default=50, help="MB of long lines imported for the peak")
    parser.add_argument(
        "--only", nargs="+", choices=["import", "long", "search"], default=["import", "long", "search"]
    )
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"": None}
    if args.against:
        trees["_against"] = args.against.resolve()
    compile_trees(trees)
    figures: dict[str, float] = {}
    if "import" in args.only:
        figures |= import_figures(args.turns, args.runs, args.pgvector, trees)
    if "long" in args.only:
        figures |= long_lines_figures(args.long_mb, trees)
    if "search" in args.only:
        figures |= search_figures(args.store, args.runs, trees)
    for name, value in with_ratios(figures).items():
        print(f"{name:<44} {value:>10g}")


if __name__ == "__main__":
    main()

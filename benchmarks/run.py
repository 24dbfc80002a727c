"""Every benchmark, offline, in one run: scripted backends, a paced OpenAI-compatible server on
127.0.0.1, a PostgreSQL + pgvector server it starts (the server index's ranking, concurrent writes),
and the embedded default. Prints a table of figures (ratios and counts measured side by side in this
run, against their targets); ``--json FILE`` writes ``{"name": number}``.

Usage: python benchmarks/run.py [--quick] [--json FILE] [--only NAME ...]
``--quick`` measures fewer rounds, sizes and questions (what CI runs); the figures are the same ones.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
os.environ.setdefault("MEM0_TELEMETRY", "False")
# OpenBLAS's idle threads spin on the cores after each product the local index makes; measured in one
# process, the server search that follows a local one waited for them (10k memories on 2 busy cores:
# server p50 41 ms with them, 27 ms without; local 77 and 45 ms). One BLAS thread, set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import figures_coordination  # noqa: E402
import figures_memory  # noqa: E402
import figures_oversized  # noqa: E402
import import_search  # noqa: E402
import real_dialogues  # noqa: E402
import serve  # noqa: E402
from embedded_default import embedded_default_correct  # noqa: E402
from pgvector_writes import concurrent_writes  # noqa: E402
from qdrant_writes import requests_per_write  # noqa: E402
from server_ranking import SERVER_SETTINGS  # noqa: E402
from store_soak import soak  # noqa: E402
from store_soak_qdrant import soak as soak_qdrant  # noqa: E402


@dataclass(frozen=True)
class Target:
    """``figure`` must be at most (or, with ``at_least``, at least) ``value``."""

    value: float
    at_least: bool = False

    def met(self, figure: float) -> bool:
        return figure >= self.value if self.at_least else figure <= self.value

    def __str__(self) -> str:
        return f"{'≥' if self.at_least else '≤'} {self.value:g}"


TARGETS = {
    "coordination_overhead_ratio": Target(1.03),
    "superseded_model_time_ratio": Target(0.01),
    "start_ratio_to_sdk": Target(1.35),
    "peak_rss_mb": Target(85),
    "local_ranking_p50_ms_10000": Target(50),
    "server_ranking_p50_ms_10000": Target(15),
    "server_ranking_p50_ms_50000": Target(60),
    "concurrent_writes_lost": Target(0),
    "concurrent_writes_doubled": Target(0),
    "soak_lost": Target(0),
    "soak_doubled": Target(0),
    "soak_orphan_rows": Target(0),
    "soak_failed_processes": Target(0),
    "qdrant_soak_lost": Target(0),
    "qdrant_soak_doubled": Target(0),
    "qdrant_soak_orphans": Target(0),
    "qdrant_soak_failed_writers": Target(0),
    "record_overhead_ms": Target(5),
    "token_count_incremental": Target(1.5),
    "largest_request_fraction": Target(0.75),
    "retrieval_recall_at_5": Target(0.9, at_least=True),
    "dialogue_hybrid_over_better_half": Target(1.0, at_least=True),
    "real_any_at_5": Target(0.8, at_least=True),
    "real_any_at_10": Target(0.9, at_least=True),
    "real_session_at_10": Target(0.98, at_least=True),
    "real_hybrid_over_better_half": Target(1.0, at_least=True),
    "dialogue_lists_changed_by_crowd": Target(0),
    "dialogue_lists_changed_by_limit": Target(0),
    "embedded_default_right_fraction": Target(0.75, at_least=True),
    "oversized_input_extra_rss_mb": Target(50),
    "import_turns_per_s_local": Target(150, at_least=True),
    "import_turns_per_s_pgvector": Target(100, at_least=True),
    "import_peak_rss_mb_local": Target(250),
    "import_long_lines_peak_rss_mb": Target(300),
    "search_cli_over_floor": Target(1.3),
}


class Postgres:
    """One PostgreSQL + pgvector server (the test suite's helper) for the measurements that need one,
    started on first use; without one, their server figures are missing from the table and the reason
    is printed."""

    def __init__(self) -> None:
        self.server: Any = None
        self.problem: str | None = None

    def url(self) -> str | None:
        if self.server is None and self.problem is None:
            try:
                from tests.servers.postgres import start_postgres

                self.server = start_postgres(*SERVER_SETTINGS)
            except Exception as error:
                self.problem = str(error)
                print(f"PostgreSQL figures skipped: {error}", file=sys.stderr)
        return self.server.url if self.server is not None else None

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


def _concurrent_writes(postgres: Postgres, writes: int) -> dict[str, float]:
    """4 processes, each with its own state folder, writing ``writes`` memories to one server store, a
    tenth of them the same content in every process."""
    url = postgres.url()
    if url is None:
        return {}
    figures = concurrent_writes(url, writes, 4)
    return {
        "concurrent_writes": figures["writes"],
        "concurrent_writes_identical": figures["identical_writes"],
        "concurrent_writes_per_s": figures["writes_per_s"],
        "concurrent_writes_lost": figures["writes_lost"],
        "concurrent_writes_doubled": figures["doubled"],
    }


def _soak(postgres: Postgres, lines: int) -> dict[str, float]:
    """4 importers into one server store while 3 readers keep opening and searching it, one importer
    killed halfway and imported again (``store_soak.py``)."""
    url = postgres.url()
    if url is None:
        return {}
    figures = soak(url, lines, 4, 3)
    return {
        "soak_lines": figures["lines"],
        "soak_s": figures["seconds"],
        "soak_reader_runs": figures["reader_runs"],
        "soak_failed_processes": figures["importers_failed"] + figures["reader_failures"],
        "soak_lost": figures["lost"],
        "soak_doubled": figures["doubled"],
        "soak_orphan_rows": figures["orphan_rows"],
    }


def _soak_qdrant(lines: int) -> dict[str, float]:
    """The soak's parts that Qdrant's in-process engine can run: 4 writers beside 3 readers opening the
    store, the server cut right after one of mem0's writes (``store_soak_qdrant.py``)."""
    figures = soak_qdrant(lines, 4, 3)
    return {
        "qdrant_soak_lines": figures["lines"],
        "qdrant_soak_s": figures["seconds"],
        "qdrant_soak_failed_writers": figures["writers_failed"],
        "qdrant_soak_lost": figures["lost"],
        "qdrant_soak_doubled": figures["doubled"],
        "qdrant_soak_orphans": figures["orphans"],
    }


def _embedded(quick: bool) -> dict[str, float]:
    """How many of the questions asked (10 with ``quick``, else all 20) the embedded default answers
    right, graded strictly; the fraction is what the target reads."""
    return embedded_default_correct(10 if quick else None)


def measurements(quick: bool, postgres: Postgres) -> dict[str, Callable[[], dict[str, float]]]:
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 50_000]
    return {
        "coordination": lambda: figures_coordination.coordination(rounds=3 if quick else 7),
        "startup": lambda: figures_coordination.startup(runs=7 if quick else 15),
        "ranking": lambda: figures_memory.ranking(sizes, 20 if quick else 60, postgres.url()),
        "concurrent_writes": lambda: _concurrent_writes(postgres, 80 if quick else 1000),
        "soak": lambda: _soak(postgres, 200 if quick else 1000),
        "qdrant_writes": lambda: requests_per_write(10 if quick else 20),
        "qdrant_soak": lambda: _soak_qdrant(200 if quick else 1000),
        "recall": lambda: figures_memory.recall_at_5(*((12, 2) if quick else (40, 9))),
        "dialogues": lambda: figures_memory.dialogue_fusion(10),
        "real_dialogues": real_dialogues.run_figures,
        "recording": lambda: figures_memory.record_overhead(100 if quick else 400),
        "token_counting": figures_memory.token_count_incremental,
        "compression": figures_memory.compression,
        "embedded_default": lambda: _embedded(quick),
        "oversized_inputs": figures_oversized.oversized_inputs,
        "import_search": lambda: import_search.import_search_figures(quick, postgres.url()),
        "serve": lambda: serve.serve_figures(rounds=3 if quick else 5),
    }


def print_table(figures: dict[str, float]) -> None:
    print(f"\n{'figure':<40} {'value':>10}  {'target':<8} met")
    for name, value in figures.items():
        target = TARGETS.get(name)
        verdict = ("yes" if target.met(value) else "NO") if target else ""
        print(f"{name:<40} {value:>10g}  {target or ''!s:<8} {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, sizes and questions")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--only", nargs="+", help="run only these measurements (names as printed)")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    postgres = Postgres()
    try:
        for name, measure in measurements(args.quick, postgres).items():
            if args.only and name not in args.only:
                continue
            started = time.perf_counter()
            measured = measure()
            figures |= measured
            print(f"{name}: {json.dumps(measured)} ({time.perf_counter() - started:.0f}s)", flush=True)
    finally:
        postgres.stop()
    print_table(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()

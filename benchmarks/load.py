"""Load figures, measured side by side in one run (scripted agents; no network):

- a long piped session: seconds per turn and the process's RSS at the first and the last turns
  (flat means the history, threads and logs do not make later turns slower or heavier);
- one turn of N scripted agents: seconds, against one turn of 3 agents.

Usage: python benchmarks/load.py [--turns 200] [--agents 16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TURN_PROBE = """
import os, resource, sys, time
from pathlib import Path
from rich.console import Console
from massgen_cli.app import MassGenApp
from massgen_cli.config import load_config
from massgen_cli.ui import ConsoleView
quiet = open(os.devnull, "w")
loaded = load_config(sys.argv[1])
view = ConsoleView(loaded.config.agent_ids, console=Console(file=quiet), quiet=True, out=quiet)
app = MassGenApp(loaded, listeners=(view,), state_dir=Path(sys.argv[2]), session_id="load", interactive=True)
for turn in range(int(sys.argv[3])):
    started = time.perf_counter()
    app.ask(f"Question number {turn}?")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{turn + 1} {time.perf_counter() - started:.4f} {rss_mb:.1f}", flush=True)
app.close()
"""


def agents_yaml(count: int) -> str:
    lines = ["agents:"]
    for number in range(count):
        lines += [
            f"  - id: agent_{number}",
            "    backend:",
            "      type: scripted",
            f'      responses: [{{tool: new_answer, args: {{content: "Answer {number}."}}}},'
            ' {tool: vote, args: {agent_id: agent1, reason: "first"}, delay: 1.0}]',
        ]
    return "\n".join([*lines, "orchestrator: {final_presentation: reuse}", "ui: {logging_enabled: true}", ""])


def long_session(folder: Path, turns: int) -> list[tuple[int, float, float]]:
    config = folder / "session.yaml"
    config.write_text(
        "agent: {id: solo, backend: {type: scripted, responses: [The answer, in one sentence.]}}\n"
        "memory: {conversation_memory: {enabled: true}}\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", TURN_PROBE, str(config), str(folder / "state"), str(turns)],
        capture_output=True, text=True, check=True, env={**os.environ, "MEM0_TELEMETRY": "False"},
    )  # fmt: skip
    return [(int(a), float(b), float(c)) for a, b, c in (line.split() for line in run.stdout.splitlines())]


def one_turn_seconds(folder: Path, agents: int) -> float:
    config = folder / f"agents_{agents}.yaml"
    config.write_text(agents_yaml(agents))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "massgen_cli", "--config", str(config), "-q", "Which answer?"],
        capture_output=True, check=True, env={**os.environ, "MASSGEN_HOME": str(folder / "state")},
    )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--agents", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = long_session(Path(folder), args.turns)
        first, last = rows[: max(1, len(rows) // 20)], rows[-max(1, len(rows) // 20) :]
        mean = lambda part: sum(row[1] for row in part) / len(part)  # noqa: E731
        print(f"{args.turns}-turn piped session (one scripted agent, conversation memory on)")
        ratio = mean(last) / mean(first)
        print(
            f"  seconds per turn, first 5%: {mean(first):.4f}; last 5%: {mean(last):.4f}; ratio {ratio:.2f}"
        )
        print(f"  peak RSS after turn 1: {rows[0][2]:.0f} MB; after turn {rows[-1][0]}: {rows[-1][2]:.0f} MB")
        few, many = one_turn_seconds(Path(folder), 3), one_turn_seconds(Path(folder), args.agents)
        print(f"one turn, CLI start to exit: 3 agents {few:.2f} s; {args.agents} agents {many:.2f} s")
        print(json.dumps({"turn_time_ratio_last_first": round(mean(last) / mean(first), 2),
                          "peak_rss_mb_first": rows[0][2], "peak_rss_mb_last": rows[-1][2],
                          "agents_turn_ratio": round(many / few, 2)}))  # fmt: skip


if __name__ == "__main__":
    main()

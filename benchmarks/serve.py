"""Figures of `massgen serve` against the paced OpenAI-compatible server on 127.0.0.1 (three agents, set
latencies, as the coordination figures use): what a question costs through the server beside the same
question through the CLI, what the server adds to the turn itself, and its throughput with 8 requests
at once beside one after another. Each figure is a ratio of times measured side by side in one run.

Usage: python benchmarks/serve.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
os.environ.setdefault("MEM0_TELEMETRY", "False")

from figures_coordination import LATENCY_BY_MODEL, three_agents_yaml  # noqa: E402
from paced_server import PacedServer  # noqa: E402

QUESTION = "What is 6 x 7?"
AT_ONCE = 8


def _environment(state: str) -> dict[str, str]:
    return {**os.environ, "MASSGEN_HOME": state, "MEM0_TELEMETRY": "False"}


class Served:
    """``massgen serve`` in a subprocess on a free port, until ``stop``."""

    def __init__(self, config: Path, state: str, at_once: int):
        self.stderr = Path(state) / "serve.stderr"
        with self.stderr.open("w") as stderr:
            command = [sys.executable, "-m", "massgen_cli", "serve", "-c", str(config), "--port", "0",
                       "--max-concurrent", str(at_once)]  # fmt: skip
            self.process = subprocess.Popen(command, env=_environment(state), stderr=stderr)
        deadline = time.monotonic() + 120
        while not (found := re.search(r"http://127\.0\.0\.1:\d+/v1", self.stderr.read_text())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {self.stderr.read_text()[-2000:]}")
            time.sleep(0.05)
        self.url = found.group(0)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def _ask(url: str) -> tuple[float, dict[str, object]]:
    """Seconds from sending one question to its whole answer, and the run's facts."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=300)
    started = time.perf_counter()
    reply = client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": QUESTION}])
    seconds = time.perf_counter() - started
    if reply.choices[0].message.content is None:
        raise RuntimeError("the server gave no answer")
    return seconds, dict(reply.model_extra["massgen_metadata"])  # type: ignore[index]


def _turn_seconds(state: str, session: str) -> float:
    """The turn's own time (``summary.json``'s ``timings_s.total``) in the run of ``session``."""
    record = json.loads((Path(state) / "sessions" / session / "session.json").read_text())
    folder = Path(state) / "massgen_logs" / record["log_folders"][-1]
    summary = json.loads(next(folder.rglob("summary.json")).read_text())
    return float(summary["timings_s"]["total"])


def _cli_seconds(config: Path, state: str) -> float:
    started = time.perf_counter()
    command = [sys.executable, "-m", "massgen_cli", "-c", str(config), "-q", QUESTION]
    subprocess.run(command, env=_environment(state), capture_output=True, check=True, timeout=300)
    return time.perf_counter() - started


def serve_figures(rounds: int = 5) -> dict[str, float]:
    """Medians over ``rounds``, the CLI and the server asked in turn: a question through the server
    over the same through the CLI; the server's request over the turn inside it; 8 questions at once
    over one question, and the throughput that makes (questions a second, and over one at a time)."""
    with PacedServer(tokens_per_s=100, tokens=30) as paced, tempfile.TemporaryDirectory() as state:
        paced.latency_by_model = dict(LATENCY_BY_MODEL)
        config = Path(state) / "three.yaml"
        config.write_text(three_agents_yaml(paced.base_url))
        served = Served(config, state, AT_ONCE)
        try:
            _ask(served.url)  # the server's first request loads what later ones reuse
            cli, alone, over_turn, together = [], [], [], []
            for _ in range(rounds):
                cli.append(_cli_seconds(config, state))
                seconds, facts = _ask(served.url)
                alone.append(seconds)
                over_turn.append(seconds / _turn_seconds(state, str(facts["session_id"])))
                started = time.perf_counter()
                with ThreadPoolExecutor(AT_ONCE) as pool:
                    list(pool.map(lambda _: _ask(served.url), range(AT_ONCE)))
                together.append(time.perf_counter() - started)
        finally:
            served.stop()
    one, eight = statistics.median(alone), statistics.median(together)
    return {
        "serve_question_s": round(one, 3),
        "cli_question_s": round(statistics.median(cli), 3),
        "serve_over_cli": round(one / statistics.median(cli), 3),
        "serve_request_over_turn": round(statistics.median(over_turn), 3),
        "serve_8_at_once_s": round(eight, 3),
        "serve_8_at_once_over_one": round(eight / one, 3),
        "serve_questions_per_s_8_at_once": round(AT_ONCE / eight, 2),
        "serve_throughput_8_over_1": round(one * AT_ONCE / eight, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    figures = serve_figures(parser.parse_args().rounds)
    for name, value in figures.items():
        print(f"{name:<36} {value:g}")


if __name__ == "__main__":
    main()

"""Figures of a run as a user starts it: coordination overhead, time spent on superseded streams, peak
memory, and start-up, all through the CLI against the paced OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paced_server import PacedServer, Served

# Three agents with different model latencies, so the first answer arrives while the others are still
# generating: they are restarted (their streams cancelled) and vote in a second step.
LATENCY_BY_MODEL = {"model-a": 0.3, "model-b": 0.5, "model-c": 0.7}
RSS_PROBE = (
    "import resource, subprocess, sys; run = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(run.returncode)"
)


def three_agents_yaml(base_url: str) -> str:
    agents = "\n".join(
        f"  - id: agent_{model[-1]}\n    backend: {{type: openai, model: {model}, api_key: sk-bench-only, "
        f'base_url: "{base_url}"}}'
        for model in LATENCY_BY_MODEL
    )
    return f"agents:\n{agents}\norchestrator: {{final_presentation: reuse}}\nui: {{logging_enabled: true}}\n"


def _massgen(*args: str) -> list[str]:
    return [sys.executable, "-m", "massgen_cli", *args]


def _environment(state: str) -> dict[str, str]:
    return {**os.environ, "MASSGEN_HOME": state, "MEM0_TELEMETRY": "False"}


def superseded_seconds(served: list[Served]) -> float:
    """Model time spent on streams after the new answer that made them stale: for each request the
    client abandoned, from the end of the latest other agent's completed answer before it ended."""
    answers = [s for s in served if s.kind == "answer" and s.completed]
    stale = 0.0
    for request in served:
        if request.completed:
            continue
        start, end = request.arrived, request.ended
        before = [a.ended for a in answers if a.model != request.model and start <= a.ended <= end]
        if before:
            stale += request.ended - max(before)
    return stale


def coordination(rounds: int = 3) -> dict[str, float]:
    """3 agents, two steps each, set latencies: coordination time over the time the model calls alone
    take (the union of the intervals in which a request was being served), superseded model time over
    all model time, and the peak RSS of the CLI (medians over ``rounds`` runs)."""
    overheads, superseded, rss = [], [], []
    for _ in range(rounds):
        with PacedServer(tokens_per_s=100, tokens=30) as server, tempfile.TemporaryDirectory() as state:
            server.latency_by_model = dict(LATENCY_BY_MODEL)
            config = Path(state) / "three.yaml"
            config.write_text(three_agents_yaml(server.base_url))
            command = [sys.executable, "-c", RSS_PROBE, *_massgen("-c", str(config), "-q", "What is 6 x 7?")]
            env = _environment(state)
            run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
            if run.returncode != 0:
                raise RuntimeError(run.stderr[-2000:])
            rss.append(int(run.stderr.strip().splitlines()[-1]) / 1024)
            summary = json.loads(next(Path(state).rglob("summary.json")).read_text())
            overheads.append(summary["timings_s"]["coordination"] / server.busy_seconds())
            served = [s for s in server.served if s.ended]
            superseded.append(superseded_seconds(served) / sum(s.ended - s.arrived for s in served))
    return {
        "coordination_overhead_ratio": round(statistics.median(overheads), 3),
        "superseded_model_time_ratio": round(statistics.median(superseded), 4),
        "peak_rss_mb": round(statistics.median(rss), 1),
    }


def _median_seconds(command: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True, env=env, timeout=120)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


SDK_FIRST_REQUEST = """
import asyncio, sys
import openai

async def ask():
    client = openai.AsyncOpenAI(api_key="sk-bench-only", base_url=sys.argv[1], max_retries=0)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    async for _ in stream:
        pass

asyncio.run(ask())
"""
"""The OpenAI SDK alone, from a bare interpreter to its first streamed request: import, client (HTTP
transport, TLS context), the chat resource, the request."""


def startup(runs: int = 7) -> dict[str, float]:
    """CLI start to the first model request, and ``--help``, beside a bare Python start, the import of
    the OpenAI SDK alone and the SDK's own start to its first request (a floor no run that calls
    OpenAI can go under), medians of ``runs``, interleaved. The ratio is the median of each CLI start
    over the SDK start beside it (the two in turn, which goes first alternating): on a shared machine
    the load drifts from one pair to the next, and a pair's ratio cancels what the two starts share,
    where a ratio of medians taken apart moved with it (1.24 to 1.73 on the same tree)."""
    import massgen_cli

    # As installed: bytecode compiled (an editable install under PYTHONDONTWRITEBYTECODE has none).
    package = os.path.dirname(massgen_cli.__file__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)
    with PacedServer(latency_s=0.0, tokens_per_s=10_000) as server, tempfile.TemporaryDirectory() as state:
        env = _environment(state)
        config = Path(state) / "one.yaml"
        backend = f'{{type: openai, model: m, api_key: sk-bench-only, base_url: "{server.base_url}"}}'
        config.write_text(f"agent: {{id: solo, backend: {backend}}}\n")
        ask = _massgen("-c", str(config), "-q", "hi")
        bare = [sys.executable, "-c", SDK_FIRST_REQUEST, server.base_url]
        firsts, sdk_firsts = [], []
        for run in range(runs):
            if run % 2:
                sdk_firsts.append(_first_request(server, bare, env))
                firsts.append(_first_request(server, ask, env))
            else:
                firsts.append(_first_request(server, ask, env))
                sdk_firsts.append(_first_request(server, bare, env))
        first, sdk_first = statistics.median(firsts), statistics.median(sdk_firsts)
        ratio = statistics.median(ours / sdks for ours, sdks in zip(firsts, sdk_firsts, strict=True))
        sdk = _median_seconds([sys.executable, "-c", "import openai"], runs, env)
        return {
            "start_to_first_request_s": round(first, 3),
            "sdk_start_to_first_request_s": round(sdk_first, 3),
            "start_beyond_sdk_s": round(first - sdk_first, 3),
            "start_ratio_to_sdk": round(ratio, 3),
            "start_beyond_sdk_import_s": round(first - sdk, 3),
            "help_s": round(_median_seconds(_massgen("--help"), runs, env), 3),
            "python_start_s": round(_median_seconds([sys.executable, "-c", "pass"], runs, env), 3),
            "import_openai_s": round(sdk, 3),
        }


def _first_request(server: PacedServer, command: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``command`` to its first request reaching ``server``."""
    seen = len(server.served)
    started = time.monotonic()
    subprocess.run(command, capture_output=True, check=True, env=env, timeout=120)
    return server.served[seen].arrived - started

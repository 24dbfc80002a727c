"""Figures of the memory system: ranking latency on the local and the server index, recall, what
recording adds to a step, what counting a growing history costs, and what compression saves over a long
session."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from load import TURN_PROBE
from retrieval_recall import dialogue_figures, recall_tables
from server_ranking import ranking_figures

from massgen_cli.memory.context.monitor import ContextMonitor

LONG_ANSWER = " ".join(f"fact{i} is remembered here" for i in range(40))


def ranking(sizes: list[int], queries: int, pgvector_url: str | None) -> dict[str, float]:
    """p50 ms of hybrid searches (a session, a turn-aware viewer, the whole store) at each size on the
    local index and, given a server, on the server index filled with the same memories, side by side
    (see server_ranking.py)."""
    return ranking_figures(sizes, queries, pgvector_url)


def recall_at_5(people: int, crowd: int) -> dict[str, float]:
    """Hybrid recall@5 on the synthetic long-conversation set, the conversation among ``crowd`` others."""
    _, crowded = recall_tables(people, 12, [5], crowd, quiet=True)
    return {"retrieval_recall_at_5": round(crowded["hybrid"][0], 3)}


def dialogue_fusion(conversations: int) -> dict[str, float]:
    """On the long-dialogue set, each conversation alone and among the others: hybrid any@k over the
    better of dense and lexical (the least over k = 1, 5, 10 and both stores), how many questions'
    top-10 lists, of any method, differ between alone and crowded, and how many hybrid top 10s differ
    between limits 10 and 100."""
    figures = dialogue_figures(conversations, [1, 5, 10])
    return {
        "dialogue_hybrid_over_better_half": round(figures.worst_fusion_ratio(), 3),
        "dialogue_lists_changed_by_crowd": sum(figures.changed.values()),
        "dialogue_lists_changed_by_limit": figures.limit_changed,
        "dialogue_hybrid_any_at_5": round(figures.crowded["hybrid"][1], 3),
        "dialogue_hybrid_context_any_at_5": round(figures.crowded["hybrid+context"][1], 3),
    }


def record_overhead(records: int = 200) -> dict[str, float]:
    """What recording adds to a step: the time of ``Recording.record`` on the event loop (the write
    itself runs in the background), p50 over ``records`` recordings of a step's messages."""
    from massgen_cli.attempts import AttemptAt
    from massgen_cli.config.schema import MassGenConfig
    from massgen_cli.memory.longterm.store.vector_stores import close_clients
    from massgen_cli.memory.runtime.opening import LongTermRun
    from massgen_cli.memory.runtime.recording import Recording

    config = MassGenConfig.model_validate(
        {
            "agent": {"id": "a", "backend": {"type": "scripted", "responses": ["x"]}},
            "memory": {"enabled": True, "persistent_memory": {"enabled": True}},
        }
    )

    async def measure(state: Path) -> list[float]:
        run = LongTermRun(config, state, "bench", lambda event: None)
        recording = Recording(run)
        recording.begin(AttemptAt(1, 1))
        times = []
        for number in range(records):
            step = [
                {"role": "user", "content": f"Question {number}: where is shipment {number * 31 % 997}?"},
                {"role": "assistant", "content": f"Shipment {number * 31 % 997} is at dock {number % 13}."},
            ]
            started = time.perf_counter()
            recording.record("a", step)
            times.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0)
        await run.close()
        close_clients()
        return times

    with tempfile.TemporaryDirectory() as state:
        times = asyncio.run(measure(Path(state)))
    return {"record_overhead_ms": round(statistics.median(times), 3)}


def token_count_incremental(tokens: int = 128_000) -> dict[str, float]:
    """What a request's counting costs as the history grows to ``tokens``, as a step does it: a fresh
    system and task message around the history, its bound (``upper_bound``) and its count (``usage``).
    The cost near the end over the cost near the start (each step adds one ~520-token message; flat is 1)."""
    monitor = ContextMonitor("gpt-4o", tokens * 2, trigger_threshold=0.75, target_ratio=0.4)
    text = "The quick brown fox jumps over the lazy dog near the river bank. " * 40
    history: list[dict[str, str]] = []
    monitor.usage([{"role": "user", "content": "warm up"}])
    costs: list[tuple[int, float]] = []
    while not costs or costs[-1][0] < tokens:
        history.append({"role": ("user", "assistant")[len(history) % 2], "content": f"{len(history)} {text}"})
        system, task = {"role": "system", "content": "You answer."}, {"role": "user", "content": "Next?"}
        request = [system, *history, task]
        started = time.perf_counter()
        monitor.upper_bound(request)
        counted = monitor.usage(request).tokens
        costs.append((counted, time.perf_counter() - started))
    early = statistics.median(cost for _, cost in costs[5:15])
    late = statistics.median(cost for _, cost in costs[-10:])
    return {
        "token_count_incremental": round(late / early, 2),
        "token_count_ms_at_128k": round(late * 1000, 3),
    }


def compression(turns: int = 40, window: int = 1500) -> dict[str, float]:
    """A ``turns``-turn session in a ``window``-token context: tokens sent over the tokens the same
    requests would have sent with the whole history (savings = 1 - that), and the largest request as a
    fraction of the window (the trigger is 0.75)."""
    import subprocess
    import sys

    monitor = ContextMonitor("scripted", window, trigger_threshold=0.75, target_ratio=0.4)
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "long.yaml"
        backend = f'{{type: scripted, responses: ["{LONG_ANSWER}"]}}'
        config.write_text(f"agent: {{id: solo, context_window: {window}, backend: {backend}}}\n")
        env = {**os.environ, "MEM0_TELEMETRY": "False"}
        state = Path(folder) / "state"
        probe = [sys.executable, "-c", TURN_PROBE, str(config), str(state), str(turns)]
        subprocess.run(probe, check=True, env=env, capture_output=True)
        requests = sorted(state.rglob("requests/*.json"), key=lambda path: int(path.parts[-4].split("_")[1]))
        sent, whole, history = [], [], []
        for path in requests:
            messages = json.loads(path.read_text())["messages"]
            question = messages[-1]
            sent.append(monitor.usage(messages).tokens)
            whole.append(monitor.usage([*history, question]).tokens)
            history += [question, {"role": "assistant", "content": LONG_ANSWER}]
    return {
        "compression_token_savings": round(1 - sum(sent) / sum(whole), 3),
        "largest_request_fraction": round(max(sent) / window, 3),
    }

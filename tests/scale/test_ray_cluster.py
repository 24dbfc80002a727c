"""`massgen batch --ray` on a real two-node Ray cluster on this machine: a head that runs no task and a
worker node started as its own processes, in its own working folder, so every task runs on the worker.
With the memory on PostgreSQL the tasks find what the driver recorded, and each task's logs and session
come back to the driver's state folder."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_config
from tests.servers.postgres import free_port

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")
NODES_SCRIPT = "import ray, sys; ray.init(address=sys.argv[1]); print(sum(n['Alive'] for n in ray.nodes()))"

CONFIG = """
agent:
  id: solo
  backend:
    type: scripted
    responses: [{{text: "You asked: {{echo}}", echo: '.+'}}]
memory:
  enabled: true
  persistent_memory:
    enabled: true
    session_name: null
    vector_store: pgvector
    pgvector: {{connection_string: '{url}', collection_name: {collection}}}
  retrieval: {{limit: 20}}
"""


def start_node(
    arguments: list[str], folder: Path, env: dict[str, str], temporary: str
) -> subprocess.Popen[bytes]:
    """``ray start --block`` in its own process group (its daemons too), so it stops by that group; its
    temporary files (and the cluster address Ray writes there) in a short folder of its own, so no
    ``ray.init()`` elsewhere on the machine mistakes it for the current cluster."""
    folder.mkdir(parents=True, exist_ok=True)
    log = (folder / "ray_start.log").open("wb")
    return subprocess.Popen(
        [str(RAY), "start", "--block", "--disable-usage-stats", f"--temp-dir={temporary}", *arguments],
        cwd=folder,
        env={**env, "HOME": str(folder)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_node(node: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGINT, 15), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.wait(timeout=wait)
            return


def alive_nodes(address: str, env: dict[str, str]) -> int:
    probe = subprocess.run(
        [sys.executable, "-c", NODES_SCRIPT, address], env=env, capture_output=True, text=True, timeout=120
    )
    return int(probe.stdout.strip().splitlines()[-1]) if probe.returncode == 0 else 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    pytest.importorskip("ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "MEM0_TELEMETRY": "False"}
    port = free_port()
    address = f"127.0.0.1:{port}"
    temporary = tempfile.mkdtemp(prefix="rc")  # sockets live there: paths must stay short
    head = start_node(
        [
            "--head",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=0",
            "--include-dashboard=false",
        ],
        tmp_path_factory.mktemp("head"),
        env,
        temporary,
    )
    nodes = [head]
    try:
        worker_folder = tmp_path_factory.mktemp("worker")
        deadline = time.monotonic() + 180
        while alive_nodes(address, env) < 1:
            assert head.poll() is None and time.monotonic() < deadline, "the head did not start"
        nodes.append(
            start_node(
                [f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=2"],
                worker_folder,
                env,
                temporary,
            )
        )
        while alive_nodes(address, env) < 2:
            assert nodes[1].poll() is None and time.monotonic() < deadline, "the worker did not join"
        yield address
    finally:
        for node in reversed(nodes):
            stop_node(node)
        shutil.rmtree(temporary, ignore_errors=True)


def test_tasks_on_another_node_share_memory_and_bring_their_logs_back(
    tmp_path, cluster, pgvector_url, monkeypatch
):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    collection = f"cluster_{uuid.uuid4().hex[:10]}"
    config = write_config(tmp_path, CONFIG.format(url=pgvector_url, collection=collection))
    driver = tmp_path / "driver-state"
    recorded = run_cli(
        "-c", str(config), "--state-dir", str(driver), "--session", "drv", "The Falcon key is in locker 42."
    )
    assert recorded.returncode == 0, recorded.stderr
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "question": f"Which locker holds the Falcon key? ({n})"}) + "\n"
            for n in range(4)
        )
    )

    out = tmp_path / "out.jsonl"
    arguments = ["batch", str(questions), "-c", str(config), "--state-dir", str(driver), "--out", str(out)]
    batch = run_cli(*arguments, "--ray", cluster, "--concurrency", "2", timeout=600, process=True)
    assert batch.returncode == 0, batch.stderr[-3000:]
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == ["q0", "q1", "q2", "q3"]
    found_by, seen = {}, {}
    for result in results:
        folder = Path(result["log_folder"])
        assert folder.is_relative_to(driver) and folder.is_dir(), result
        events = [json.loads(line) for line in (folder / "turn_1" / "attempt_1" / "events.jsonl").open()]
        retrieved = [m for e in events if e["type"] == "MemoryRetrieved" for m in e["memories"]]
        found_by[result["id"]] = {m["session_id"] for m in retrieved if "locker 42" in m["text"]}
        # what the task saw instead, should it miss: its lookups' hits and its notices
        seen[result["id"]] = [(m["session_id"], m["score"], m["text"][:40]) for m in retrieved] + [
            e["message"] for e in events if e["type"] == "Notice"
        ]
    missed = {task: seen[task] for task, sessions in found_by.items() if sessions != {"drv"}}
    assert not missed, f"what the tasks that missed saw instead: {missed}"
    listed = run_cli("sessions", "list", "--state-dir", str(driver))
    assert all(f"batch-q{n}" in listed.stdout for n in range(4)), listed.stdout
    shown = run_cli("logs", "show", "--state-dir", str(driver))
    assert shown.returncode == 0, shown.stderr

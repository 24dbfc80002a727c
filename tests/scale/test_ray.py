"""`massgen batch --ray`: each question a task on a real local Ray instance started here; the same answers
as a local batch; local Qdrant refused with the remedy; pgvector shared by the tasks loses no write."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli, write_config

pytestmark = pytest.mark.slow

ECHO_AGENT = """
agent:
  id: solo
  backend:
    type: scripted
    responses: [{text: "You asked: {echo}", echo: 'What is \\d+ \\+ \\d+\\?'}]
"""


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A local Ray instance (2 CPUs, no token auth, no dashboard), stopped after the module."""
    ray = pytest.importorskip("ray")
    previous = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if previous is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = previous


def write_questions(folder: Path, count: int) -> Path:
    path = folder / "questions.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"q{n}", "question": f"What is {n} + {n}?"}) + "\n" for n in range(count))
    )
    return path


def answers(path: Path) -> dict[str, str]:
    return {line["id"]: line["final_answer"] for line in map(json.loads, path.read_text().splitlines())}


def test_local_qdrant_is_refused_with_the_remedy_before_ray_starts(tmp_path: Path):
    write_config(tmp_path, ECHO_AGENT + "memory: {enabled: true, persistent_memory: {enabled: true}}\n")
    questions = write_questions(tmp_path, 2)
    run = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl", "--ray")
    assert run.returncode == 2
    assert "local Qdrant" in run.stderr and "pgvector" in run.stderr and "qdrant.mode: server" in run.stderr
    assert not (tmp_path / "out.jsonl").exists(), "refused before anything is written"


def test_ray_tasks_give_the_same_answers_as_the_local_batch(tmp_path: Path, ray_address: str):
    write_config(tmp_path, ECHO_AGENT)
    questions = write_questions(tmp_path, 6)
    local = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "local.jsonl")
    assert local.returncode == 0, local.stderr
    on_ray = run_cli(
        "batch",
        str(questions),
        "-c",
        "config.yaml",
        "--out",
        "ray.jsonl",
        "--ray",
        ray_address,
        "--concurrency",
        "2",
        process=True,
    )
    assert on_ray.returncode == 0, on_ray.stderr
    assert answers(tmp_path / "ray.jsonl") == answers(tmp_path / "local.jsonl")
    assert answers(tmp_path / "ray.jsonl")["q3"] == "You asked: What is 3 + 3?"


def test_pgvector_shared_by_ray_tasks_loses_no_write(tmp_path: Path, ray_address: str, pgvector_url: str):
    collection = f"ray_{uuid.uuid4().hex[:10]}"
    pgvector = f"{{connection_string: '{pgvector_url}', collection_name: {collection}}}"
    store = f"{{enabled: true, vector_store: pgvector, pgvector: {pgvector}}}"
    write_config(tmp_path, ECHO_AGENT + f"memory: {{enabled: true, persistent_memory: {store}}}\n")
    questions = write_questions(tmp_path, 4)  # all in flight at once (the default concurrency), one table
    run = run_cli(
        "batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl", "--ray", ray_address, process=True
    )
    assert run.returncode == 0, run.stderr
    listing = massgen("memory", "list", "-c", "config.yaml", "--json")
    assert listing.exit_code == 0, listing.stderr
    stored = {record["text"] for record in map(json.loads, listing.stdout.splitlines())}
    for n in range(4):
        assert f"What is {n} + {n}?" in stored and f"You asked: What is {n} + {n}?" in stored, n

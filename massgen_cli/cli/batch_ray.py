"""Batch questions as Ray tasks: ``massgen batch … --ray`` (a local Ray instance) or ``--ray ADDRESS``
(an existing cluster). Each question is one task running the same code as a local batch
(``batch.answer_alone``) on the installed package; the loaded config travels with the task. At most
``concurrency`` tasks are in flight and results come back in completion order.

Long-term memory shared across machines needs a server store: a config whose persistent memory is on
local Qdrant (a folder one process at a time) is refused before Ray starts. With PostgreSQL or a Qdrant
server (which hold the memory index and the sessions themselves), or no long-term memory, a task
answers in a state folder of its own on its node, and its logs, session and spooled records come back
with its result (``task_bundle``): nodes share no folder.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from massgen_cli.cli import task_bundle
from massgen_cli.cli.batch import BatchQuestion, BatchResult, ResultWriter, answer_alone
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.memory import PersistentMemoryConfig, persistent_enabled
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.errors import UsageError

LOCAL = "local"
RAY_HINT = "Ray is not installed: pip install -e '.[ray]' (or pip install 'massgen-cli[ray]')"


def _long_term_stores(config: MassGenConfig) -> list[PersistentMemoryConfig]:
    """The persistent memory settings a run of this config opens."""
    memories = [config.memory, *(agent.memory for agent in config.agents if agent.memory is not None)]
    shared = config.orchestrator.shared_memory.persistent
    return [
        memory.persistent_memory
        for memory in memories
        if persistent_enabled(memory) or (shared and memory is config.memory)
    ]


def index_in_state_folder(config: MassGenConfig) -> bool:
    """Whether a run of this config keeps its memory index in the state folder (a local Qdrant store;
    a Qdrant server holds the index itself, as PostgreSQL does)."""
    stores = _long_term_stores(config)
    return any(store.vector_store == "qdrant" and store.qdrant.mode != "server" for store in stores)


def local_store_problem(config: MassGenConfig) -> str | None:
    """Why this config's long-term memory cannot be shared by Ray tasks, or None."""
    for store in _long_term_stores(config):
        if store.vector_store == "qdrant" and store.qdrant.mode != "server" and store.on_disk:
            return (
                "--ray needs long-term memory in a server store that every task can reach: local Qdrant "
                "is a folder one process at a time. Use persistent_memory.vector_store: pgvector (with "
                "pgvector.connection_string), or qdrant.mode: server, or run the batch without --ray"
            )
    return None


class RayBatch:
    """Questions as Ray tasks, at most ``concurrency`` in flight."""

    def __init__(self, loaded: LoadedConfig, state_dir: Path, concurrency: int, address: str):
        problem = local_store_problem(loaded.config)
        if problem:
            raise UsageError(problem)
        try:
            import ray
        except ImportError:
            raise UsageError(RAY_HINT) from None
        self.ray = ray
        self.loaded, self.state_dir = loaded, state_dir
        self.concurrency = max(1, concurrency)
        self.address = address  # "local": a new instance, never a cluster a file in Ray's temp folder names
        self.in_flight: dict[Any, BatchQuestion] = {}

    def run(
        self, questions: list[BatchQuestion], writer: ResultWriter, on_result: Callable[[BatchResult], None]
    ) -> None:
        """Ctrl-C cancels the tasks in flight (left out of the file) and raises KeyboardInterrupt again."""
        ray = self.ray
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"MEM0_TELEMETRY": "False"}},
            )
        task = ray.remote(_answer_task).options(max_retries=0)
        pending = iter(questions)
        try:
            self._submit(task, pending, self.concurrency)
            while self.in_flight:
                ready, _ = ray.wait(list(self.in_flight), num_returns=1)
                for ref in ready:
                    question = self.in_flight.pop(ref)
                    result = self._result(ref, question)
                    writer.write(result)
                    on_result(result)
                self._submit(task, pending, len(ready))
        except KeyboardInterrupt:
            for ref in self.in_flight:
                ray.cancel(ref, force=True)
            self.in_flight.clear()
            raise
        finally:
            if started_here:
                ray.shutdown()

    def _submit(self, task: Any, pending: Iterator[BatchQuestion], count: int) -> None:
        for _, question in zip(range(count), pending, strict=False):
            self.in_flight[task.remote(self.loaded, str(self.state_dir), question)] = question

    def _result(self, ref: Any, question: BatchQuestion) -> BatchResult:
        try:
            answered = self.ray.get(ref)
        except Exception as error:  # the task or its worker failed: the question's result says so
            return BatchResult(question.id, question.question, error=f"Ray task failed: {error}")
        result = BatchResult(**answered["result"])
        if answered["bundle"] is not None:
            task_bundle.unpack(answered["bundle"], self.state_dir)
            result.log_folder = task_bundle.on_driver(
                result.log_folder, Path(answered["state_dir"]), self.state_dir
            )
        return result


def _answer_task(loaded: LoadedConfig, state_dir: str, question: BatchQuestion) -> dict[str, Any]:
    """What a Ray worker runs: the local batch's code for one question, in a state folder of its own
    whose logs, session and spool go back with the result (in the driver's ``state_dir`` when the
    config keeps its memory index there)."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if index_in_state_folder(loaded.config):
        result = answer_alone(loaded, Path(state_dir), question)
        return {"result": result.__dict__, "bundle": None, "state_dir": state_dir}
    with tempfile.TemporaryDirectory(prefix="massgen-task-") as folder:
        result = answer_alone(loaded, Path(folder), question)
        return {"result": result.__dict__, "bundle": task_bundle.pack(Path(folder)), "state_dir": folder}

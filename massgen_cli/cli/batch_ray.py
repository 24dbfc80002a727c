"""Batch questions as Ray tasks: ``massgen batch … --ray`` (a local Ray instance) or ``--ray ADDRESS``
(an existing cluster). Each question is one task running the same code as a local batch
(``batch.answer_alone``) on the installed package; the loaded config travels with the task. At most
``concurrency`` tasks are in flight and results come back in completion order.

Long-term memory shared across machines needs a server store: a config whose persistent memory is on
local Qdrant (a folder one process at a time) is refused before Ray starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from massgen_cli.cli.batch import BatchQuestion, BatchResult, ResultWriter, answer_alone
from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.memory import persistent_enabled
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.errors import UsageError

LOCAL = "local"
RAY_HINT = "Ray is not installed: pip install -e '.[ray]' (or pip install 'massgen-cli[ray]')"


def local_store_problem(config: MassGenConfig) -> str | None:
    """Why this config's long-term memory cannot be shared by Ray tasks, or None."""
    memories = [config.memory, *(agent.memory for agent in config.agents if agent.memory is not None)]
    shared = config.orchestrator.shared_memory.persistent
    for memory in memories:
        if not (persistent_enabled(memory) or (shared and memory is config.memory)):
            continue
        store = memory.persistent_memory
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
        self.address = None if address == LOCAL else address
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
            return BatchResult(**self.ray.get(ref))
        except Exception as error:  # the task or its worker failed: the question's result says so
            return BatchResult(question.id, question.question, error=f"Ray task failed: {error}")


def _answer_task(loaded: LoadedConfig, state_dir: str, question: BatchQuestion) -> dict[str, Any]:
    """What a Ray worker runs: the local batch's code for one question."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    return answer_alone(loaded, Path(state_dir), question).__dict__

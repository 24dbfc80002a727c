"""Recording off the hot path: a bounded background queue that writes to long-term memory.

``submit`` never waits for mem0; ``flush`` (end of turn, exit) waits until the queue is empty;
``record_now`` (an agent's own save) writes at once and says what was stored. A failed write is kept
and tried again at the next flush, and reported; it never ends a turn. Every recording leaves a debug
dump under the attempt's ``memory_debug/`` and, once written, a ``MemoryRecorded`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from massgen_cli.errors import StoreUnreachable
from massgen_cli.events import MemoryRecorded, Notice, NoticeLevel, RecordedMemory, RunEvent
from massgen_cli.memory.longterm.record.memories import (
    IndexedMemory,
    RecordContext,
    RecordMessage,
    RecordOutcome,
)
from massgen_cli.memory.longterm.record.spool import Spool
from massgen_cli.runlogs.writer import write_json

QUEUE_SIZE = 256
MAX_RETRIES = 3


class MemoryLookup(Protocol):
    """Memories by id, as the index keeps them (their key and text)."""

    def get(self, ids: Iterable[str]) -> dict[str, IndexedMemory]: ...


class RecordingStore(Protocol):
    """Where the recorder writes (``PersistentMemory``); blocking, so it runs in a thread. Its ``index``
    says what a recording stored, for the ``MemoryRecorded`` event."""

    def record(
        self, messages: list[RecordMessage], context: RecordContext, *, verbatim: bool = False
    ) -> RecordOutcome: ...

    @property
    def index(self) -> MemoryLookup: ...


@dataclass
class Job:
    messages: list[RecordMessage]
    context: RecordContext
    dump_dir: Path | None
    tries: int = 0


class MemoryRecorder:
    """Feeds a PersistentMemory from a queue, one job at a time, in a worker thread."""

    def __init__(self, store: RecordingStore, emit: Callable[[RunEvent], None], spool: Spool | None = None):
        self.store = store
        self.emit = emit
        self.spool = spool
        self.queue: asyncio.Queue[Job] | None = None
        self.failed: list[Job] = []
        self.errors: list[str] = []
        self._worker: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # one write at a time: the queue's, or one an agent waits for
        self.outage_said = False
        """Whether a failure because the memory server cannot be reached was said in this run."""

    def submit(self, messages: list[RecordMessage], context: RecordContext, dump_dir: Path | None) -> None:
        """Queue a recording without waiting; when the queue is full the job is kept for the next flush."""
        if not messages:
            return
        job = Job(messages, context, dump_dir)
        self._ensure_worker()
        assert self.queue is not None
        try:
            self.queue.put_nowait(job)
        except asyncio.QueueFull:
            self.failed.append(job)
            self._report(job, "the recording queue is full; kept for the next flush")

    async def record_now(
        self, messages: list[RecordMessage], context: RecordContext, dump_dir: Path | None
    ) -> RecordOutcome:
        """Write ``messages`` now, verbatim, and return what was stored: an agent's own save waits for its
        memory ids. It takes its turn with the queue's writes, never beside one; a failure is raised."""
        _dump(Job(messages, context, dump_dir, tries=1))
        async with self._writing:
            outcome = await asyncio.to_thread(self.store.record, messages, context, verbatim=True)
        await self._said(context.agent_id, outcome)
        return outcome

    def _ensure_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self.queue = self.queue or asyncio.Queue(QUEUE_SIZE)
            self._worker = asyncio.create_task(self._run(), name="memory-recorder")

    async def _run(self) -> None:
        assert self.queue is not None
        while True:
            job = await self.queue.get()
            try:
                await self._write(job)
            except Exception as error:  # the worker must outlive any one job
                self._report(job, str(error))
            finally:
                self.queue.task_done()

    async def _write(self, job: Job) -> None:
        job.tries += 1
        context = job.context
        self.emit(
            Notice(
                "debug",
                f"🔍 [_mem0_add] Recording to mem0 (agent={context.agent_id}, session={context.session_id}, "
                f"turn={context.turn})",
            )
        )
        try:
            _dump(job)
            async with self._writing:
                outcome = await asyncio.to_thread(self.store.record, job.messages, context)
        except NotImplementedError:
            return  # a store that only reads is allowed
        except Exception as error:  # a memory failure is reported, never fatal
            if job.tries < MAX_RETRIES:
                self.failed.append(job)
            else:
                self._keep(job)
            self._report(job, str(error), error)
            return
        await self._said(context.agent_id, outcome)
        if outcome.note:  # stored, but not as configured: said once, as a change in what the run does
            self.errors.append(outcome.note)
            self.emit(Notice("degraded", outcome.note))

    async def _said(self, agent_id: str, outcome: RecordOutcome) -> None:
        """A ``MemoryRecorded`` for what a recording stored (a lookup of its ids in the index); an event
        that cannot be made is said with --debug, and the recording stands."""
        ids = list(dict.fromkeys([*outcome.added, *outcome.existing]))
        try:
            found = await asyncio.to_thread(self.store.index.get, ids) if ids else {}
            event = recorded_event(agent_id, ids, outcome, found)
        except Exception as error:  # the event reports a recording; it cannot undo or fail it
            self.emit(Notice("debug", f"no MemoryRecorded event for {agent_id}: {error!r}"))
            return
        self.emit(event)

    def _keep(self, job: Job) -> None:
        if self.spool is not None:
            self.spool.keep(job.messages, job.context)

    def _report(self, job: Job, message: str, error: BaseException | None = None) -> None:
        line = f"memory recording for {job.context.agent_id} (turn {job.context.turn}) failed: {message}"
        level, line = self.noticed(line, error)
        self.errors.append(line)
        self.emit(Notice(level, line))

    def noticed(self, line: str, error: BaseException | None) -> tuple[NoticeLevel, str]:
        """How a memory failure is said: as a warning, but while the memory server cannot be reached
        only the first one is (with where records wait); the others show with --debug."""
        if not isinstance(error, StoreUnreachable):
            return "warning", line
        if self.outage_said:
            return "debug", line
        self.outage_said = True
        waiting = f"in {self.spool.path}" if self.spool is not None else "in this run"
        return "warning", (
            f"{line.rstrip('. ')}. While it cannot be reached, memory records wait {waiting} to be written "
            "later, and further failures like this one show only with --debug"
        )

    async def settled(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) until the queued jobs are written; errors stay for ``flush``."""
        if self.queue is None:
            return
        if not self.queue.empty():
            self._ensure_worker()
        try:
            await asyncio.wait_for(asyncio.shield(self.queue.join()), timeout_s)
        except TimeoutError:
            self.emit(Notice("debug", f"memory records still being written after {timeout_s:g}s; going on"))

    async def flush(self) -> list[str]:
        """Wait for every queued job, retry earlier failures once; returns this flush's errors."""
        if self.failed:
            retry, self.failed = self.failed, []
            for job in retry:
                self.submit(job.messages, job.context, job.dump_dir)
        if self.queue is not None and not self.queue.empty():
            self._ensure_worker()  # a worker that died must not leave the join waiting forever
        if self.queue is not None:
            await self.queue.join()
        errors, self.errors = self.errors, []
        return errors

    async def close(self) -> None:
        await self.flush()
        for job in self.failed:  # still failing after the retries: kept for a later run
            self._keep(job)
        self.failed = []
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)


def recorded_event(
    agent_id: str, ids: list[str], outcome: RecordOutcome, found: dict[str, IndexedMemory]
) -> MemoryRecorded:
    """What a recording stored, in the order of its memory ``ids`` (new: those ``outcome`` added); an id
    the index no longer holds (deleted meanwhile) is left out."""
    memories = [found[memory_id] for memory_id in ids if memory_id in found]
    return MemoryRecorded(
        agent_id, [RecordedMemory(m.id, m.key, m.text, m.id in outcome.added) for m in memories]
    )


def _dump(job: Job) -> None:
    if job.dump_dir is None:
        return
    now = datetime.now()
    context = job.context
    base = job.dump_dir / f"mem0_add_{context.agent_id}_{now.strftime('%H%M%S_%f')}"
    path, counter = base.with_suffix(".json"), 1
    while path.exists():
        path, counter = base.with_name(f"{base.name}_{counter}.json"), counter + 1
    write_json(
        path,
        {
            "timestamp": now.isoformat(),
            "agent_id": context.agent_id,
            "session_id": context.session_id,
            "metadata": {"turn": context.turn, "attempt": context.attempt, "try": job.tries},
            "messages": [{"role": m.get("role"), "content": m.get("content")} for m in job.messages],
        },
    )

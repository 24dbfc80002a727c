"""Concurrent memory writes on pgvector: N processes, each with its own state folder (as on separate
machines), share one PostgreSQL store and record at the same time; a tenth of each process's records
are the same content in every process (the user's words every machine saw). Afterwards every write
must be there, and identical content must be one memory with a source per process.

Prints writes, processes, seconds, writes per second, mem0's rows, the index's memories and sources,
the writes lost (a recording whose content is missing, or present without that process's source, or a
memory without its row in mem0's table: must be 0) and the memories doubled (content stored more than
once, or a row of mem0's table the index does not hold: must be 0). The server is a real PostgreSQL +
pgvector on 127.0.0.1, started for the run (the test suite's server helper) unless ``--url`` names one.

Usage: python benchmarks/pgvector_writes.py [--writes 1000] [--processes 4] [--url postgresql://...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

IDENTICAL_EVERY = 10
"""Every tenth record of a process is the same content in every process."""

WRITER = """
import json, sys
from pathlib import Path
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.record.memories import RecordContext

agent, url, collection, state = sys.argv[1:5]
settings = PersistentMemoryConfig.model_validate(
    {"enabled": True, "vector_store": "pgvector",
     "pgvector": {"connection_string": url, "collection_name": collection}}
)
store = PersistentMemory(settings, Path(state), domain="general", task_type="general")
store.mem0
print("ready", flush=True)
for n, message in enumerate(json.loads(sys.stdin.readline())):
    store.record([message], RecordContext(agent, "load", n % 20 + 1))
store.close()
"""


def records(agent: str, count: int) -> list[dict[str, Any]]:
    """What ``agent`` records: lines of its own and, every tenth, words every process heard (the user's,
    on a fixed date: the day is part of what makes content the same)."""
    return [
        {
            "role": "user",
            "content": f"Everyone heard note {n}: dock {n % 13} closes at {n % 24}h.",
            "metadata": {"timestamp": "2026-01-01"},
        }
        if n % IDENTICAL_EVERY == 0
        else {
            "role": "assistant",
            "content": f"{agent} wrote record {n}: the shipment {n * 7919 % 10007} left dock {n % 13}.",
        }
        for n in range(count)
    ]


def concurrent_writes(url: str, writes: int, processes: int) -> dict[str, float]:
    """Start every writer, each with its own state folder, wait until all are ready, release them
    together, then count what arrived."""
    collection = f"load_{uuid.uuid4().hex[:10]}"
    share = writes // processes
    planned = {f"w{i}": records(f"w{i}", share) for i in range(processes)}
    env = {**os.environ, "MEM0_TELEMETRY": "False", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="massgen-pgload-") as folder:
        writers = {
            agent: subprocess.Popen(
                [sys.executable, "-c", WRITER, agent, url, collection, str(Path(folder) / agent)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for agent in planned
        }
        try:
            seconds = _release(writers, planned)
        finally:
            for writer in writers.values():
                if writer.poll() is None:
                    writer.kill()
                    writer.wait()
        found = _count(url, collection, Path(folder) / "reader")
    expected: dict[str, set[str]] = {}
    for agent, messages in planned.items():
        for message in messages:
            expected.setdefault(message["content"], set()).add(agent)
    lost = sum(len(agents - found.sources.get(text, set())) for text, agents in expected.items())
    doubled = sum(copies - 1 for copies in found.copies.values())
    total = share * processes
    return {
        "writes": total,
        "processes": processes,
        "identical_writes": sum(len(agents) for agents in expected.values() if len(agents) > 1),
        "seconds": round(seconds, 2),
        "writes_per_s": round(total / seconds, 1),
        "memories": len(expected),
        "rows": len(found.mem0_ids),
        "indexed": len(found.memory_ids),
        "sources": found.source_count,
        # A recording whose content is missing or lacks its process's source; a memory without its row.
        "writes_lost": lost + len(found.memory_ids - found.mem0_ids),
        # Content stored more than once; a row of mem0's table that no memory of the index holds.
        "doubled": doubled + len(found.mem0_ids - found.memory_ids),
    }


def _release(writers: dict[str, subprocess.Popen[str]], planned: dict[str, list[Any]]) -> float:
    """Wait until every writer is ready, hand each its records at once, wait for all; the seconds they
    took."""
    for writer in writers.values():
        assert writer.stdout is not None
        if writer.stdout.readline().strip() != "ready":
            raise RuntimeError(writer.communicate()[1][-2000:])
    lines = {agent: json.dumps(messages) + "\n" for agent, messages in planned.items()}
    started = time.perf_counter()
    for agent, writer in writers.items():
        assert writer.stdin is not None
        writer.stdin.write(lines[agent])
        writer.stdin.flush()
    outputs = [writer.communicate(timeout=900) for writer in writers.values()]
    seconds = time.perf_counter() - started
    failures = [
        err[-2000:] for writer, (_, err) in zip(writers.values(), outputs, strict=True) if writer.returncode
    ]
    if failures:
        raise RuntimeError("\n".join(failures))
    return seconds


class Found:
    """What the store holds after the writes: mem0's row ids, the index's memory ids, how many memories
    each text is, the writers (agents) among each text's sources, and how many sources there are."""

    def __init__(self) -> None:
        self.mem0_ids: set[str] = set()
        self.memory_ids: set[str] = set()
        self.copies: Counter[str] = Counter()
        self.sources: dict[str, set[str]] = {}
        self.source_count = 0


def _count(url: str, collection: str, state: Path) -> Found:
    """Read the store as yet another machine would (its own state folder)."""
    import psycopg
    from psycopg import sql

    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    found = Found()
    with psycopg.connect(url) as connection:
        rows = connection.execute(sql.SQL("SELECT id::text FROM {}").format(sql.Identifier(collection)))
        found.mem0_ids = {row[0] for row in rows}
    pgvector = {"connection_string": url, "collection_name": collection}
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "pgvector", "pgvector": pgvector}
    )
    store = PersistentMemory(settings, state, domain="general", task_type="general")
    try:
        for memory in store.list_memories():
            found.memory_ids.add(memory.id)
            found.copies[memory.text] += 1
            found.sources.setdefault(memory.text, set()).update(s.agent_id for s in memory.sources)
            found.source_count += len(memory.sources)
    finally:
        store.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--url", help="a PostgreSQL database with the vector extension (default: start one)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        from tests.servers.postgres import start_postgres

        server = start_postgres()
        url = server.url
    try:
        figures = concurrent_writes(url, args.writes, args.processes)
    finally:
        if server is not None:
            server.stop()
    for name, value in figures.items():
        print(f"{name:>16}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()

"""Concurrent memory writes on pgvector: N processes share one state folder and one PostgreSQL store and
record at the same time; afterwards every write must be present, as a row and in the memory index.

Prints writes, processes, seconds, writes per second and the writes lost (must be 0). The server is a
real PostgreSQL + pgvector on 127.0.0.1, started for the run (the test suite's server helper) unless
``--url`` names one.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WRITER = """
import json, sys
from pathlib import Path
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.record.memories import RecordContext

agent, url, collection, state, count = sys.argv[1:6]
settings = PersistentMemoryConfig.model_validate(
    {"enabled": True, "vector_store": "pgvector",
     "pgvector": {"connection_string": url, "collection_name": collection}}
)
store = PersistentMemory(settings, Path(state), domain="general", task_type="general")
store.mem0
print("ready", flush=True)
sys.stdin.readline()
for n in range(int(count)):
    text = f"{agent} wrote record {n}: the shipment {n * 7919 % 10007} left dock {n % 13}."
    store.record([{"role": "assistant", "content": text}], RecordContext(agent, "load", n % 20 + 1))
store.close()
"""


def concurrent_writes(url: str, writes: int, processes: int) -> dict[str, float]:
    """Start every writer, wait until all are ready, release them together, then count what arrived."""
    import psycopg
    from psycopg import sql

    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    collection = f"load_{uuid.uuid4().hex[:10]}"
    state = Path(tempfile.mkdtemp(prefix="massgen-pgload-"))
    share = writes // processes
    env = {**os.environ, "MEM0_TELEMETRY": "False", "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{i}", url, collection, str(state), str(share)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(processes)
    ]
    for writer in writers:
        assert writer.stdout is not None
        if writer.stdout.readline().strip() != "ready":
            raise RuntimeError(writer.communicate()[1][-2000:])
    started = time.perf_counter()
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    outputs = [writer.communicate(timeout=900) for writer in writers]
    failures = [err[-2000:] for writer, (_, err) in zip(writers, outputs, strict=True) if writer.returncode]
    seconds = time.perf_counter() - started
    if failures:
        raise RuntimeError("\n".join(failures))
    with psycopg.connect(url) as connection:
        rows = connection.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(collection)))
        row_count = rows.fetchone()[0]  # type: ignore[index]
    pgvector = {"connection_string": url, "collection_name": collection}
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "pgvector", "pgvector": pgvector}
    )
    store = PersistentMemory(settings, state, domain="general", task_type="general")
    try:
        indexed = len(store.list_memories())
    finally:
        store.close()
    expected = share * processes
    return {
        "writes": expected,
        "processes": processes,
        "seconds": round(seconds, 2),
        "writes_per_s": round(expected / seconds, 1),
        "rows": row_count,
        "indexed": indexed,
        "writes_lost": expected - min(row_count, indexed),
    }


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
        print(f"{name:>14}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()

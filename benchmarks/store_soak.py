"""The shared store under load and faults: N importers (``massgen memory import``, each with a state folder
of its own, as on N machines) write into one PostgreSQL store while M readers keep opening it and
searching it (``massgen memory search``, each open reading the store's form), one importer is killed
with SIGKILL halfway and its file imported again to the end. Afterwards every line must be one memory
with its source, and mem0's table and the index must hold the same memories.

Prints lines, importers, readers, seconds, the reader runs and how many failed, then lost (a line whose
memory or source is missing), doubled (a text stored twice), orphan rows (mem0's rows without a memory
of the index, and memories without their row): each must be 0. The server is a real PostgreSQL + pgvector
on 127.0.0.1, started for the run unless ``--url`` names one.

Usage: python benchmarks/store_soak.py [--lines 1000] [--importers 4] [--readers 4] [--url postgresql://...]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from import_search import PGVECTOR_CONFIG as CONFIG  # noqa: E402  (the same store, as import_search.py uses it)


def _lines(importer: str, count: int) -> list[dict[str, Any]]:
    """What one importer imports: lines of its own, each said once."""
    return [
        {
            "content": f"{importer} noted on day {n}: the heron reached tower {n * 7 % 97} by the mill.",
            "turn": 0,
        }
        for n in range(count)
    ]


def soak(url: str, lines: int, importers: int, readers: int) -> dict[str, float]:
    collection = f"soak_{uuid.uuid4().hex[:10]}"
    env = {**os.environ, "MEM0_TELEMETRY": "False", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="massgen-soak-") as name:
        folder = Path(name)
        config = folder / "config.yaml"
        config.write_text(CONFIG.format(url=url, collection=collection))
        files = {}
        for number in range(importers):
            files[f"i{number}"] = folder / f"i{number}.jsonl"
            files[f"i{number}"].write_text(
                "".join(json.dumps(line) + "\n" for line in _lines(f"i{number}", lines // importers))
            )
        seed = folder / "seed.jsonl"
        seed.write_text(json.dumps({"content": "The store is made before the importers start."}) + "\n")
        _cli(
            ["memory", "import", str(seed), "--config", str(config)], folder / "seed", env
        )  # every table made
        started = time.perf_counter()
        reading = Readers(functools.partial(_search, config, folder, env), readers)
        running: dict[str, subprocess.Popen[bytes]] = {}
        reading.start()
        try:
            for key, path in files.items():
                running[key] = _start(
                    ["memory", "import", str(path), "--config", str(config)], folder / key, env
                )
            victim = next(iter(running))
            _kill_halfway(running[victim], url, collection, 2)
            failures = [key for key, process in running.items() if key != victim and _failed(process)]
            again = _cli(
                ["memory", "import", str(files[victim]), "--config", str(config)], folder / victim, env
            )
        finally:
            reading.stop()
            for process in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
        seconds = time.perf_counter() - started
        found = _count(url, collection)
    expected = {line["content"] for key in files for line in _lines(key, lines // importers)}
    expected.add("The store is made before the importers start.")
    return {
        "lines": len(expected),
        "importers": importers,
        "readers": readers,
        "seconds": round(seconds, 1),
        "importers_failed": len(failures) + (again != 0),
        "reader_runs": reading.runs,
        "reader_failures": reading.failures,
        "lost": len(expected - found["texts"]),
        "doubled": found["doubled"],
        "orphan_rows": len(found["rows"] - found["memories"]) + len(found["memories"] - found["rows"]),
    }


def _start(args: list[str], state: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", *args, "--state-dir", str(state)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _failed(process: subprocess.Popen[bytes]) -> bool:
    """Whether the process failed (its error said on stderr)."""
    _, err = process.communicate(timeout=900)
    if process.returncode:
        sys.stderr.write(err.decode(errors="replace")[-1500:])
    return process.returncode != 0


def _cli(args: list[str], state: Path, env: dict[str, str]) -> int:
    process = _start(args, state, env)
    _, err = process.communicate(timeout=900)
    if process.returncode:
        sys.stderr.write(err.decode(errors="replace")[-1500:])
    return process.returncode


def _kill_halfway(process: subprocess.Popen[bytes], url: str, collection: str, rows: int) -> None:
    """SIGKILL ``process`` once mem0's table holds ``rows`` rows (an importer writes mem0's rows of a batch
    before the index's: killed then, it leaves rows the index never got), or when it ends first."""
    import psycopg
    from psycopg import sql

    query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(collection))
    with psycopg.connect(url, autocommit=True) as watcher:
        while process.poll() is None:
            row = watcher.execute(query).fetchone()
            if row is not None and row[0] >= rows:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)  # polling the server, not waiting for a result
    process.wait()


class Readers:
    """Threads that each keep reading the store until stopped (``read(number)``: whether reader
    ``number``'s read succeeded), counting the reads and those that failed."""

    def __init__(self, read: Callable[[int], bool], count: int):
        self.read = read
        self.runs = self.failures = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._loop, args=(n,)) for n in range(count)]
        self._lock = threading.Lock()

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _loop(self, number: int) -> None:
        while not self._stop.is_set():
            succeeded = self.read(number)
            with self._lock:
                self.runs += 1
                self.failures += not succeeded


def _search(config: Path, folder: Path, env: dict[str, str], number: int) -> bool:
    """Reader ``number`` opens the store and searches it (``massgen memory search``, a process)."""
    args = ["memory", "search", "heron tower", "--config", str(config), "--limit", "3"]
    return _cli(args, folder / f"reader{number}", env) == 0


def _count(url: str, collection: str) -> dict[str, Any]:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url) as connection:
        rows = {
            r[0]
            for r in connection.execute(sql.SQL("SELECT id::text FROM {}").format(sql.Identifier(collection)))
        }
        index = sql.Identifier(f"{collection}_index")
        memories = list(connection.execute(sql.SQL("SELECT id, text FROM {}").format(index)))
    texts = [text for _, text in memories]
    return {
        "rows": rows,
        "memories": {memory_id for memory_id, _ in memories},
        "texts": set(texts),
        "doubled": len(texts) - len(set(texts)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--importers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--url", help="a PostgreSQL database with the vector extension (default: start one)")
    args = parser.parse_args()
    server, url = None, args.url
    if url is None:
        from tests.servers.postgres import start_postgres

        server = start_postgres()
        url = server.url
    try:
        figures = soak(url, args.lines, args.importers, args.readers)
    finally:
        if server is not None:
            server.stop()
    for name, value in figures.items():
        print(f"{name:>18}: {value}")


if __name__ == "__main__":
    main()

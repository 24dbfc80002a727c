"""Requests a memory write makes to a Qdrant server: every call the client hands the server, counted by
method, while a store in server mode records new memories and then the same memories from another
agent (each becomes a source of a known memory). The write journal's entry and mem0's own point are
among them. No Qdrant server runs here: the server is qdrant-client's in-process engine (the same API;
what is counted is requests, each a network round trip on a real server).

Usage: python benchmarks/qdrant_writes.py [--writes 20]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("MEM0_TELEMETRY", "False")


class Counted:
    """The engine's methods, each call counted by name."""

    def __init__(self, engine: Any, calls: collections.Counter[str]):
        self.engine, self.calls = engine, calls

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.engine, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)

        return call


def requests_per_write(writes: int) -> dict[str, float]:
    """Requests per new memory and per known memory (another agent's source of it), on average."""
    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.record.memories import RecordContext
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.store.vector_stores import close_clients, share_server_client
    from tests.servers.qdrant import in_process_server

    server, calls = in_process_server(), collections.Counter[str]()
    server._client = Counted(server._client, calls)  # type: ignore[attr-defined]
    qdrant = {
        "mode": "server",
        "url": "http://qdrant.invalid:6333",
        "collection_name": f"w_{uuid.uuid4().hex[:8]}",
    }
    settings = PersistentMemoryConfig.model_validate(
        {"enabled": True, "vector_store": "qdrant", "qdrant": qdrant}
    )
    share_server_client(settings, server)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        store = PersistentMemory(settings, Path(folder), domain="general", task_type="general")
        try:
            store.record([{"role": "user", "content": "A first memory."}], RecordContext("agent_a", "s", 1))
            for agent, figure in (("agent_a", "new"), ("agent_b", "known")):
                calls.clear()
                for n in range(writes):
                    said = {"role": "user", "content": f"Note {n}: dock {n % 7} closes at {n % 24}h."}
                    store.record([said], RecordContext(agent, "s", n % 5 + 1))
                each = sum(calls.values()) / writes
                figures[f"qdrant_requests_per_{figure}_memory"] = round(each, 2)
                methods = ", ".join(f"{name} {count / writes:g}" for name, count in sorted(calls.items()))
                print(f"{figure:>5} memory: {each:5.2f} requests each ({methods})")
        finally:
            store.close()
            close_clients()
            server.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=20)
    requests_per_write(parser.parse_args().writes)


if __name__ == "__main__":
    main()

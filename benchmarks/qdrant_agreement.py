"""How far the Qdrant index's ranking (Query API: a dense and a sparse prefetch fused by the server)
agrees with the local index's (scoped BM25 and cosine, the same reciprocal rank fusion), side by side
on the same memories.

The memories are the conformance test's: a synthetic conversation recorded by three agents taking
turns (each turn won by one of them), its probes' facts again in a second session, every 17th memory
marked stale. For every probe question, scope and method it prints the mean overlap of the two top
10s (shared memories over the longer list), the share of identical top 10s, and recall@10 of the
memory that answers the probe in each index. Qdrant runs in process (qdrant-client's local mode,
the same API as a server).

Usage: python benchmarks/qdrant_agreement.py [--people 12] [--chatter 3] [--seed 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")

_HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location(
    "synthetic_conversations", _HERE / "synthetic_conversations.py"
)
assert _SPEC is not None and _SPEC.loader is not None
synthetic = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = synthetic
_SPEC.loader.exec_module(synthetic)

AGENTS = ("agent_a", "agent_b", "agent_c")
METHODS = ("hybrid", "lexical", "dense")


@dataclass(frozen=True)
class Agreement:
    """One scope and method: mean top-10 overlap, share of identical top 10s, and recall@10 of the
    answering memory in the local index and in Qdrant."""

    overlap: float
    identical: float
    local_recall: float
    qdrant_recall: float


def local_settings() -> Any:
    from massgen_cli.config.memory import PersistentMemoryConfig

    return PersistentMemoryConfig(enabled=True)


def qdrant_settings(collection: str) -> Any:
    from massgen_cli.config.memory import PersistentMemoryConfig

    return PersistentMemoryConfig.model_validate(
        {
            "enabled": True,
            "vector_store": "qdrant",
            "qdrant": {"mode": "server", "url": "http://qdrant.invalid:6333", "collection_name": collection},
        }
    )


def open_qdrant_store(state_dir: Path, client: Any) -> Any:
    """A store whose Qdrant server is ``client`` (an in-process engine)."""
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.store.vector_stores import share_server_client

    settings = qdrant_settings(f"agree_{uuid.uuid4().hex[:10]}")
    share_server_client(settings, client)
    return PersistentMemory(settings, state_dir, domain="qa", task_type="recall")


def load(store: Any, conversation: Any) -> None:
    """Two sessions: the conversation's messages by three agents taking turns (each turn won by one of
    them), and the same conversation's probes' facts again in a second session, by one agent."""
    from massgen_cli.memory.longterm.record.memories import RecordContext
    from massgen_cli.memory.longterm.store.index.stale import StaleMark

    messages = synthetic.records(conversation)
    contexts = [RecordContext(AGENTS[turn % 3], "first", turn) for turn in range(1, len(messages) + 1)]
    store.record_many(list(zip(messages, contexts, strict=True)))
    for context in contexts:
        store.record_winner("first", context.turn, AGENTS[context.turn % 2])
    for turn, probe in enumerate(conversation.probes[::2], start=1):
        store.record([{"role": "assistant", "content": probe.fact}], RecordContext("agent_a", "second", turn))
    for memory in sorted(store.list_memories(), key=lambda m: m.key)[::17]:
        store.index.mark_stale(StaleMark(memory.id, "outdated", "agent_b", session_id="first", turn=3))


def scopes(turns: int) -> dict[str, Any]:
    """The scopes compared; the dated ones hold the conversation's days 4 to 9 (its turns are dated
    ten a day from 1 January 2023; the second session's facts are dated the day they are recorded)."""
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
    from massgen_cli.memory.longterm.retrieve.visibility import Viewer

    since, until = date(2023, 1, 4), date(2023, 1, 9)
    return {
        "store": SearchFilter(),
        "session": SearchFilter(session_id="first"),
        "agent": SearchFilter(agent_id="agent_b"),
        "viewer": SearchFilter(viewer=Viewer("agent_c", "first", turns // 2)),
        "viewer, every session": SearchFilter(viewer=Viewer("agent_a", "second", 3, all_sessions=True)),
        "stale too": SearchFilter(session_id="first", include_stale=True),
        "days": SearchFilter(since=since, until=until),
        "viewer, days": SearchFilter(viewer=Viewer("agent_c", "first", turns), since=since),
    }


def overlap(expected: list[str], found: list[str]) -> float:
    """Shared memories of two top lists over the longer one's length (1 when both are empty)."""
    longest = max(len(expected), len(found))
    return len(set(expected) & set(found)) / longest if longest else 1.0


def agreement(local: Any, qdrant: Any, conversation: Any, scope: Any, method: str) -> Agreement:
    overlaps, identical, local_found, qdrant_found = [], 0, 0, 0
    for probe in conversation.probes:
        expected = local.search(probe.question, limit=10, scope=scope, method=method)
        found = qdrant.search(probe.question, limit=10, scope=scope, method=method)
        expected_keys, found_keys = [h.memory.key for h in expected], [h.memory.key for h in found]
        overlaps.append(overlap(expected_keys, found_keys))
        identical += expected_keys == found_keys
        local_found += any(h.text == probe.fact for h in expected)
        qdrant_found += any(h.text == probe.fact for h in found)
    probes = len(conversation.probes)
    return Agreement(
        statistics.fmean(overlaps), identical / probes, local_found / probes, qdrant_found / probes
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=12)
    parser.add_argument("--chatter", type=int, default=3)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    from qdrant_client import QdrantClient

    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.store.vector_stores import close_clients

    conversation = synthetic.build_conversation(
        people=args.people, chatter_per_fact=args.chatter, seed=args.seed
    )
    with tempfile.TemporaryDirectory() as folder:
        local = PersistentMemory(local_settings(), Path(folder) / "local", domain="qa", task_type="recall")
        qdrant = open_qdrant_store(Path(folder) / "qdrant", QdrantClient(location=":memory:"))
        for store in (local, qdrant):
            load(store, conversation)
        print(f"{local.index.count()} memories, {len(conversation.probes)} probes")
        print("method   scope                  overlap  same   recall local / qdrant")
        for method in METHODS:
            for name, scope in scopes(len(conversation.messages)).items():
                a = agreement(local, qdrant, conversation, scope, method)
                print(
                    f"{method:8} {name:22} {a.overlap:7.3f} {a.identical:6.3f} "
                    f"{a.local_recall:6.3f} / {a.qdrant_recall:.3f}"
                )
        local.close()
        qdrant.close()
        close_clients()


if __name__ == "__main__":
    main()

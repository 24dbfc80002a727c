"""How the index's data becomes Qdrant points: collection names, point ids derived from what makes a
point unique, the BM25 terms as a sparse vector, and memories and sources to and from payloads."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any

from massgen_cli.memory.longterm.record.memories import IndexedMemory, Source
from massgen_cli.memory.longterm.record.names import MemoryNames
from massgen_cli.memory.longterm.store.index.bm25 import K1, B

DENSE = "dense"
TERMS = "terms"
_NAMESPACE = uuid.UUID("5b0c4c52-3d0e-4a57-9a43-2f1d2b6f0d11")
REFERENCE_LENGTH = 24.0
"""The length (in terms) a memory's BM25 saturation is computed against. Qdrant weighs each term by
the collection's IDF at search time but cannot know the average length then, so each memory's term
weights are fixed when it is written: ``tf·(k1+1) / (tf + k1·(1 − b + b·length/REFERENCE_LENGTH))``.
24 is about the average length of a recorded message."""


def index_collection(collection: str) -> str:
    return f"{collection}_index"


def records_collection(collection: str) -> str:
    return f"{collection}_records"


def point_id(kind: str, *parts: object) -> str:
    """The id of the one point of ``kind`` that ``parts`` name (the same on every machine)."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join([kind, *map(str, parts)])))


def term_index(term: str) -> int:
    """A term's dimension in the sparse vector (a stable 32-bit hash of it)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def document_terms(found: Sequence[str]) -> Any:
    """A memory's terms as a sparse vector of BM25 term weights (without IDF, which Qdrant adds)."""
    from qdrant_client import models

    norm = K1 * (1 - B + B * len(found) / REFERENCE_LENGTH)
    weights: dict[int, float] = {}
    for term, count in Counter(found).items():
        weights[term_index(term)] = weights.get(term_index(term), 0.0) + count * (K1 + 1) / (count + norm)
    return models.SparseVector(indices=list(weights), values=list(weights.values()))


def query_terms_vector(wanted: Sequence[str]) -> Any:
    """A query's distinct terms as a sparse vector, each weighing 1."""
    from qdrant_client import models

    indices = list(dict.fromkeys(term_index(term) for term in wanted))
    return models.SparseVector(indices=indices, values=[1.0] * len(indices))


def day_number(day: date | None) -> int | None:
    """A memory's day as its payload keeps it: a number (the day's ordinal), so a filter takes a range."""
    return day.toordinal() if day else None


def names_payload(names: MemoryNames) -> dict[str, Any]:
    """A memory's names as payload fields that filters match: ``speaker`` (empty when none)."""
    return {"speaker": names.speaker}


def source_payload(memory_id: str, source: Source, recorded_at: str, writer: str) -> dict[str, Any]:
    return {
        "kind": "source",
        "memory_id": memory_id,
        "agent_id": source.agent_id,
        "session_id": source.session_id,
        "turn": source.turn,
        "attempt": source.attempt,
        "recorded_at": recorded_at,
        "extra": json.dumps(source.extra, ensure_ascii=False),
        "writer": writer,
    }


def source_of(payload: dict[str, Any]) -> Source:
    extra = payload.get("extra")
    return Source(
        payload["agent_id"],
        payload["session_id"],
        int(payload["turn"]),
        int(payload["attempt"]),
        json.loads(extra) if extra else {},
    )


def source_order(payload: dict[str, Any]) -> tuple[str, str, str, int, int]:
    """Sources in the order they were recorded (what the other indexes keep as a row number)."""
    return (
        payload["recorded_at"],
        payload["session_id"],
        payload["agent_id"],
        int(payload["turn"]),
        int(payload["attempt"]),
    )


def memory_of(payload: dict[str, Any], sources: Sequence[Source]) -> IndexedMemory:
    expires_at = payload.get("expires_at")
    return IndexedMemory(
        payload["memory_id"],
        payload["key"],
        payload["text"],
        payload["domain"],
        payload["task_type"],
        payload["role"],
        payload["created_at"],
        float(expires_at) if expires_at is not None else None,
        json.loads(payload.get("extra") or "{}"),
        tuple(sources),
    )

"""What every part of the Qdrant index builds on: the client, the two collections (made once, by
whoever comes first), metadata points, and reading every point a filter selects."""

from __future__ import annotations

import warnings
from typing import Any

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.terms import memory_terms
from massgen_cli.memory.longterm.store.index.upgrade import INDEX_FORM
from massgen_cli.memory.longterm.store.qdrant.client import GuardedClient, client_location
from massgen_cli.memory.longterm.store.qdrant.points import (
    DENSE,
    TERMS,
    day_number,
    document_terms,
    index_collection,
    names_payload,
    point_id,
    records_collection,
)

PAGE = 256
LEAST_VERSION = (1, 17)
"""Qdrant 1.17 added ``insert_only`` writes, which decide between two writers of the same memory; an
older server would take them as plain upserts and let the second writer overwrite the first."""
_RECORD_FIELDS = {
    "kind": "keyword",
    "memory_id": "keyword",
    "session_id": "keyword",
    "goal": "keyword",
    "turn": "integer",
    "recorded_at": "datetime",
}
_INDEX_FIELDS = {
    "memory_id": "keyword",
    "domain": "keyword",
    "task_type": "keyword",
    "stale": "bool",
    "expires_at": "float",
    "sources[].session_id": "keyword",
    "sources[].agent_id": "keyword",
    "speaker": "keyword",
    "day": "integer",
}


class QdrantBase:
    """The open index on a Qdrant server (its collections exist once this is built). The client is the
    caller's: one per process, shared with mem0, closed by whoever made it."""

    def __init__(self, client: Any, collection: str, dimensions: int):
        self.client = GuardedClient(client, client_location(client))
        self.collection = collection
        self.memories = index_collection(collection)
        self.records = records_collection(collection)
        self.dimensions = dimensions
        require_version(self.client)
        self._create_collections()
        if self.meta("index_form") != INDEX_FORM:
            self._upgrade()

    def _create_collections(self) -> None:
        from qdrant_client import models

        dense = {DENSE: models.VectorParams(size=self.dimensions, distance=models.Distance.COSINE)}
        sparse = {TERMS: models.SparseVectorParams(modifier=models.Modifier.IDF)}
        self._create(self.memories, _INDEX_FIELDS, vectors_config=dense, sparse_vectors_config=sparse)
        self._create(self.records, _RECORD_FIELDS, vectors_config={})
        found = self.client.get_collection(self.memories).config.params.vectors
        size = found[DENSE].size if isinstance(found, dict) and DENSE in found else None
        if size != self.dimensions:
            raise MemoryStoreError(
                f"the Qdrant collection '{self.memories}' holds {size}-dimension vectors but the embedder "
                f"makes {self.dimensions}; use the embedder it was built with or another "
                "persistent_memory.qdrant.collection_name"
            )

    def _upgrade(self) -> None:
        """What collections made by an earlier version lack: the payload indexes added since, names
        (``record.names``) for the memories stored before the index kept them, terms made again for
        the memories whose terms today's form counts otherwise (the dates they name: ``record.dates``),
        and each memory's day; the names of the words texts mention, which an earlier form kept, go.
        Another process doing the same at once writes the same indexes, fields and vectors."""
        from qdrant_client import models

        for collection, fields in ((self.memories, _INDEX_FIELDS), (self.records, _RECORD_FIELDS)):
            self._index_fields(collection, fields)
        everything = models.Filter(must=[])
        self.client.delete_payload(self.memories, ["entities"], points=everything, wait=True)
        wanted = ["indexed", "text", "speaker", "length", "created_at"]
        for point in self.every(self.memories, None, wanted):
            indexed, text = point.payload.get("indexed") or point.payload["text"], point.payload["text"]
            found = {"day": day_number(memory_day(indexed, text, point.payload["created_at"]))}
            if "speaker" not in point.payload:
                found |= names_payload(memory_names(indexed, text))
            lexical = memory_terms(indexed, text)
            if len(lexical) != point.payload.get("length"):
                self._term_again(point.id, lexical)
            self.client.set_payload(self.memories, found, points=[point.id], wait=True)
        self.set_meta("index_form", INDEX_FORM)

    def _term_again(self, point: str, lexical: list[str]) -> None:
        from qdrant_client import models

        vector = models.PointVectors(id=point, vector={TERMS: document_terms(lexical)})
        self.client.update_vectors(self.memories, [vector], wait=True)
        self.client.set_payload(self.memories, {"length": len(lexical)}, points=[point], wait=True)

    def _index_fields(self, collection: str, fields: dict[str, str]) -> None:
        """The payload indexes of ``fields`` that ``collection`` does not have yet."""
        from qdrant_client import models

        present = self.client.get_collection(collection).payload_schema or {}
        with warnings.catch_warnings():  # local mode says payload indexes do nothing there
            warnings.simplefilter("ignore", UserWarning)
            for field, schema in fields.items():
                if field not in present:
                    self.client.create_payload_index(collection, field, models.PayloadSchemaType(schema))

    def _create(self, name: str, fields: dict[str, str], **config: Any) -> None:
        """The collection and its payload indexes; another process making it at the same moment wins."""

        if self.client.collection_exists(name):
            return
        try:
            self.client.create_collection(name, **config)
        except (ValueError, MemoryStoreError):
            if not self.client.collection_exists(name):
                raise
            return
        self._index_fields(name, fields)

    def close(self) -> None:
        """Nothing to release: the client is shared and closed at exit."""

    def identity(self) -> str:
        """Which server and collection this is, without secrets: ``<address> <collection>``."""
        return f"{self.client.location} {self.collection}"

    def meta(self, name: str) -> str | None:
        found = self.client.retrieve(self.records, [point_id("meta", name)], with_payload=True)
        return str(found[0].payload["value"]) if found else None

    def set_meta(self, name: str, value: str) -> None:
        self.put(self.records, point_id("meta", name), {"kind": "meta", "name": name, "value": value})

    def count(self) -> int:
        return int(self.client.count(self.memories, exact=True).count)

    def empty(self) -> bool:
        points, _ = self.client.scroll(self.memories, limit=1, with_payload=False)
        return not points

    def put(self, collection: str, identity: str, payload: dict[str, Any], **options: Any) -> None:
        """One payload-only point, written before this returns."""
        from qdrant_client import models

        self.client.upsert(
            collection, [models.PointStruct(id=identity, vector={}, payload=payload)], wait=True, **options
        )

    def every(self, collection: str, where: Any, fields: Any = True) -> list[Any]:
        """Every point ``where`` selects, page by page."""
        found: list[Any] = []
        offset = None
        while True:
            page, offset = self.client.scroll(
                collection, scroll_filter=where, limit=PAGE, offset=offset, with_payload=fields
            )
            found += page
            if offset is None:
                return found


def require_version(client: Any) -> None:
    """Refuse a server older than ``LEAST_VERSION``, in one line that says what to run instead."""
    version = str(client.info().version)
    found = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    if found < LEAST_VERSION:
        raise MemoryStoreError(
            f"the Qdrant server at {client.location} runs {version}; long-term memory on a Qdrant server "
            "needs 1.17 or later (docker-compose.qdrant.yml starts one)"
        )

"""A collection of the local folder in the shape mem0 calls a vector store (mem0 2.2.1's
``VectorStoreBase``: insert, search, get, list, update, delete, reset), so mem0's ``Memory`` writes and
reads it as it does its own Qdrant store. Dense vectors only: mem0's keyword search needs fastembed's
BM25, which is not installed, and searches run in the memory index anyway; so a point's payload holds no
``text_lemmatized`` (mem0's BM25 input, a second copy of the text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from massgen_cli.memory.longterm.store.edge.filters import edge_filter
from massgen_cli.memory.longterm.store.edge.folder import EdgeCollection, EdgeFolder

UNREAD_FIELDS = ("text_lemmatized",)
"""Payload fields mem0 writes that nothing reads from this store."""


@dataclass(frozen=True)
class StoredPoint:
    """A point as mem0 reads one back (``id``, ``payload``, ``score``), its id as text."""

    id: str
    payload: dict[str, Any] = field(default_factory=dict)
    score: float | None = None
    vector: list[float] | None = None


class EdgeVectorStore:
    """One collection of an ``EdgeFolder``, for mem0."""

    def __init__(
        self, folder: EdgeFolder, collection_name: str, embedding_model_dims: int, *, now: bool = True
    ):
        """``now``: open (or make) the shard at once, so a damaged one shows before anything is written."""
        self.folder = folder
        self.collection_name = collection_name
        self.embedding_model_dims = embedding_model_dims
        self.collection: EdgeCollection = folder.collection(collection_name, embedding_model_dims)
        if now:
            self.collection.read(lambda shard: None)

    def create_col(self, *args: Any, **kwargs: Any) -> None:
        """The collection is made on its first write."""

    def insert(
        self, vectors: list[Any], payloads: list[dict[str, Any]] | None = None, ids: list[Any] | None = None
    ) -> None:
        from qdrant_edge import Point, UpdateOperation

        points = [
            Point(
                str(ids[n]) if ids else n,
                {"": [float(x) for x in vector]},
                _kept(payloads[n] if payloads else {}),
            )
            for n, vector in enumerate(vectors)
        ]
        self.collection.write(UpdateOperation.upsert_points(points), len(points))

    def search(
        self, query: str, vectors: list[float], top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[StoredPoint]:
        from qdrant_edge import Query, QueryRequest

        request = QueryRequest(
            limit=top_k,
            query=Query.Nearest([float(x) for x in vectors]),
            filter=edge_filter(filters),
            with_payload=True,
        )
        return [_stored(found) for found in self.collection.read(lambda shard: shard.query(request))]

    def search_batch(
        self,
        queries: list[str],
        vectors_list: list[list[float]],
        top_k: int = 1,
        filters: dict[str, Any] | None = None,
    ) -> list[list[StoredPoint]]:
        return [
            self.search(query, vectors, top_k, filters)
            for query, vectors in zip(queries, vectors_list, strict=True)
        ]

    def keyword_search(self, query: str, top_k: int = 5, filters: dict[str, Any] | None = None) -> None:
        """No keyword ranking here (mem0 then ranks by similarity alone)."""
        return None

    def delete(self, vector_id: Any) -> None:
        from qdrant_edge import UpdateOperation

        self.collection.write(UpdateOperation.delete_points([str(vector_id)]))

    def update(
        self, vector_id: Any, vector: list[float] | None = None, payload: dict[str, Any] | None = None
    ) -> None:
        from qdrant_edge import Point, PointVectors, UpdateOperation

        point_id = str(vector_id)
        if vector is not None and payload is not None:
            point = Point(point_id, {"": [float(x) for x in vector]}, _kept(payload))
            self.collection.write(UpdateOperation.upsert_points([point]), 1)
            return
        if payload is not None:
            self.collection.write(UpdateOperation.set_payload([point_id], _kept(payload)), 1)
        if vector is not None:
            moved = PointVectors(point_id, {"": [float(x) for x in vector]})
            self.collection.write(UpdateOperation.update_vectors([moved]), 1)

    def get(self, vector_id: Any) -> StoredPoint | None:
        found = self.collection.read(lambda shard: shard.retrieve([str(vector_id)], True, False))
        return _stored(found[0]) if found else None

    def list_cols(self) -> list[str]:
        return self.folder.collection_names()

    def delete_col(self) -> None:
        self.collection.drop()

    def col_info(self) -> dict[str, Any]:
        points = self.collection.read(lambda shard: shard.info().points_count)
        return {"name": self.collection_name, "points": points, "dimensions": self.embedding_model_dims}

    def list(
        self, filters: dict[str, Any] | None = None, top_k: int | None = 100
    ) -> tuple[list[StoredPoint], None]:
        """Up to ``top_k`` points that ``filters`` admit (mem0 reads the first item of the pair)."""
        from qdrant_edge import ScrollRequest

        request = ScrollRequest(
            limit=top_k or 100, filter=edge_filter(filters), with_payload=True, with_vector=False
        )
        records, _ = self.collection.read(lambda shard: shard.scroll(request))
        return [_stored(record) for record in records], None

    def count(self, filters: dict[str, Any] | None = None) -> int:
        from qdrant_edge import CountRequest

        request = CountRequest(exact=True, filter=edge_filter(filters))
        return int(self.collection.read(lambda shard: shard.count(request)))

    def reset(self) -> None:
        """Every point removed (the collection stays)."""
        self.delete_col()
        self.collection = self.folder.collection(self.collection_name, self.embedding_model_dims)


def _kept(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if key not in UNREAD_FIELDS}


def _stored(found: Any) -> StoredPoint:
    return StoredPoint(str(found.id), dict(found.payload or {}), getattr(found, "score", None))

"""The Qdrant server's memory index as one object, with what the local index offers (``StoreIndex``)."""

from __future__ import annotations

from massgen_cli.memory.longterm.store.qdrant.learned import QdrantLearned
from massgen_cli.memory.longterm.store.qdrant.search import QdrantSearch


class QdrantIndex(QdrantSearch, QdrantLearned):
    """The index's two collections on a Qdrant server, beside mem0's collection of the same name."""

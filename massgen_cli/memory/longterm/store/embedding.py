"""Vectors for the store: of what is stored (kept for mem0's own ``embed`` of the same text, or many in
one batch for a bulk write), of what is asked; and the check that a store is opened with the embedder
that built it (vectors of two embedders cannot be compared)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.embedder import Mem0EmbedderAdapter, shared_local_embedder
from massgen_cli.memory.longterm.store.index.contract import StoreIndex
from massgen_cli.memory.longterm.store.mem0_config import EmbedderPlan
from massgen_cli.memory.longterm.store.mem0_store import Mem0Store


def check_embedder(index: StoreIndex, plan: EmbedderPlan) -> None:
    """Record the embedder of a new store; refuse one that another embedder built."""
    built_with = index.meta("embedder")
    wanted = f"{plan.name}/{plan.dimensions}"
    if built_with is None:
        index.set_meta("embedder", wanted)
    elif built_with != wanted:
        raise MemoryStoreError(
            f"this memory store was built with embedder {built_with} but the config asks for {wanted}; "
            "use the same embedding settings, another --state-dir, or `massgen memory clear --all --yes`"
        )


class StoreEmbedding:
    """The configured embedder: the offline one in this process, any other through mem0's."""

    def __init__(self, plan: EmbedderPlan, mem0: Mem0Store):
        self.plan = plan
        self.mem0 = mem0

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts`` from the configured embedder."""
        if self.plan.local:
            return shared_local_embedder().embed_many(texts)
        return [self.mem0.memory.embedding_model.embed(text, "add") for text in texts]

    def stored_vector(self, text: str) -> list[float]:
        """The vector of what is stored; the offline embedder keeps it for mem0's own ``embed``, any
        other embedder is asked twice (mem0 2.2.1's ``add`` takes no vector)."""
        embedder = self.mem0.memory.embedding_model
        if isinstance(embedder, Mem0EmbedderAdapter):
            return embedder.vector(text)
        return self.embed([text])[0]

    def stored_vectors(
        self, texts: list[str], ready: Mapping[str, Sequence[float]] | None = None
    ) -> list[Sequence[float]]:
        """The vectors of many texts to store: those ``ready`` has (made ahead), the others in one
        batch, each distinct text embedded once."""
        found: dict[str, Sequence[float]] = {text: ready[text] for text in texts if ready and text in ready}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            found.update(zip(missing, self.embed(missing), strict=True))
        return [found[text] for text in texts]

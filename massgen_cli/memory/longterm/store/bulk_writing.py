"""Recording many records at once (imports): what ``MemoryWriter.record`` stores for each, written in
bulk when records are kept verbatim. Known texts are found by their key before anything is embedded;
the new ones are embedded in one batch (or ahead of it: ``store.importing``), written to the vector
store in one insert (``store.bulk``) under one journal entry, and the index's rows land in one
transaction, in the order one-by-one recording would write them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage, RecordOutcome
from massgen_cli.memory.longterm.store.bulk import VerbatimRecord
from massgen_cli.memory.longterm.store.contention import retried
from massgen_cli.memory.longterm.store.journal import journalled_write
from massgen_cli.memory.longterm.store.writing import Draft, MemoryWriter, kept

Items = list[tuple[RecordMessage, RecordContext]]
"""Records to store, each with who records it and where."""
Vectors = Mapping[str, Sequence[float]]
"""Vectors made ahead, by text."""
Placed = tuple[RecordOutcome, Draft, RecordContext]
Written = dict[str, tuple[str, Sequence[float]]]
"""Each new key's point id and vector, as written to the vector store."""


class BulkWriter:
    """``MemoryWriter``'s recording, many records at a time; blocking, so callers run it in a thread."""

    def __init__(self, writer: MemoryWriter):
        self.writer = writer
        self.index = writer.index

    @property
    def extracts(self) -> bool:
        return self.writer.extracts

    def new_texts(self, items: Items) -> list[str]:
        """The texts ``record_many(items)`` would embed now: those of keys the store does not hold."""
        placed = self._drafts(items, [RecordOutcome() for _ in items])
        known = self.index.ids_for_keys(draft.key for _, draft, _ in placed)
        return [draft.text for _, draft, _ in placed if draft.key not in known]

    def _drafts(self, items: Items, outcomes: list[RecordOutcome]) -> list[Placed]:
        """Each item's drafts, in order, with the item's outcome and context."""
        return [
            (outcome, draft, context)
            for outcome, (message, context) in zip(outcomes, items, strict=True)
            for draft in self.writer.verbatim_drafts(kept([message]), context)
        ]

    def record_many(self, items: Items, ready: Vectors | None = None) -> list[RecordOutcome]:
        """What ``record`` of each ``(message, context)`` in turn stores, with its outcome. Kept
        verbatim, they are written in bulk: a known text only gains a source (found by its key before
        anything is embedded), the new texts are embedded in one batch (but those ``ready`` has),
        written to the vector store in one insert under one journal entry, and the index's rows land
        in one transaction, in the order ``record`` would write them."""
        if self.writer.extracts:
            return [self.writer.record([message], context) for message, context in items]
        outcomes = [RecordOutcome(verbatim=True) for _ in items]
        drafts = self._drafts(items, outcomes)
        known = self.index.ids_for_keys(draft.key for _, draft, _ in drafts)
        fresh = _first_of_each([(draft, context) for _, draft, context in drafts if draft.key not in known])
        if not fresh:
            retried(lambda: self._index_all(drafts, known, {}))
            return outcomes
        with journalled_write(self.index, lambda: self.writer.mem0.memory) as token:
            written = self._write_vectors(fresh, token, ready or {})
            retried(lambda: self._index_all(drafts, known, written))
        return outcomes

    def _index_all(self, drafts: list[Placed], known: dict[str, str], written: Written) -> None:
        """The index's rows of ``drafts`` in one transaction (tried again whole when the server aborts
        it: each try starts from the outcomes and points it was given)."""
        for outcome, _, _ in drafts:
            outcome.added.clear()
            outcome.existing.clear()
        unplaced = dict(written)
        placed: dict[str, Placed] = {}
        with self.index.batch() as taken:
            for outcome, draft, context in drafts:
                if draft.key in unplaced:
                    memory_id, vector = unplaced.pop(draft.key)
                    placed[memory_id] = (outcome, draft, context)
                    self.writer.index_new(memory_id, draft, context, outcome, vector)
                elif existing := known.get(draft.key) or self.index.id_for_key(draft.key):
                    self.writer.add_source(existing, draft.source, context, outcome)
        for memory_id, _ in taken:  # answered when the batch ended (the server's index)
            outcome, draft, context = placed[memory_id]
            self.writer.key_taken(memory_id, draft, context, outcome)

    def _write_vectors(
        self, firsts: list[tuple[Draft, RecordContext]], token: str, ready: Vectors
    ) -> Written:
        """The new drafts embedded in one batch (but those ``ready`` has) and written to the vector store
        at once; each key's point id and vector."""
        vectors = self.writer.embedding.stored_vectors([draft.text for draft, _ in firsts], ready)
        records = [
            VerbatimRecord(draft.text, draft.role, self.writer.metadata(draft, context, token), vector)
            for (draft, context), vector in zip(firsts, vectors, strict=True)
        ]
        ids = self.writer.mem0.add_verbatim(records)
        return {draft.key: (i, v) for (draft, _), i, v in zip(firsts, ids, vectors, strict=True)}


def _first_of_each(drafts: list[tuple[Draft, RecordContext]]) -> list[tuple[Draft, RecordContext]]:
    """The first draft of each key, in order."""
    first: dict[str, tuple[Draft, RecordContext]] = {}
    for draft, context in drafts:
        first.setdefault(draft.key, (draft, context))
    return list(first.values())

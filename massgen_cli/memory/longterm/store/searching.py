"""Search: the stored vectors, BM25 and the speakers the query names, each ranked inside the search's
scope, fused by reciprocal rank over pools whose size does not depend on the limit (with the same
search among the memories dated when the question asks about, when it names a date, and the answer
to a line that asks lifted next to it, and the first of the fused ranking re-ranked by what tells an
answer from a look-alike: ``retrieve.rerank``), optionally reordered by learned values, echoes put
after the line they repeat, and attributed to the source that makes each memory visible. The question
is embedded without the speakers it names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from massgen_cli.memory.longterm.record.dates import query_span, said_on, says_when, today
from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.record.memories import ContextTurn, IndexedMemory, MemoryHit, speaker_of
from massgen_cli.memory.longterm.record.names import as_name
from massgen_cli.memory.longterm.retrieve.answers import ASKED_IN, answers_lifted, asks
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import query_names, without_speakers
from massgen_cli.memory.longterm.retrieve.ranking import Method, tiers, with_dated
from massgen_cli.memory.longterm.retrieve.rerank import DEPTH, Candidate, asks_when, reranked
from massgen_cli.memory.longterm.store.embedding import StoreEmbedding
from massgen_cli.memory.longterm.store.index.contract import StoreIndex
from massgen_cli.memory.longterm.store.index.terms import query_terms, terms
from massgen_cli.memory.longterm.store.learning import ValueLearning

BACKFILL_BATCH = 256


class SearchOptions(TypedDict, total=False):
    """What a search may say beyond its query and limit (``MemorySearch.search`` holds the defaults),
    for a caller that passes them on."""

    scope: SearchFilter | None
    method: Method
    value_goal: str | None
    value_weight: float
    context: int


@dataclass(eq=False, repr=False)  # for its constructor: compared and shown by identity
class MemorySearch:
    """Ranks the index's memories for a query; reads only the index (and the embedder for the query)."""

    index: StoreIndex
    embedding: StoreEmbedding
    values: ValueLearning

    def search(
        self,
        query: str,
        *,
        limit: int,
        scope: SearchFilter | None = None,
        method: Method = "hybrid",
        value_goal: str | None = None,
        value_weight: float = 0.0,
        context: int = 0,
    ) -> list[MemoryHit]:
        """The memories that best match ``query``: similarity over the stored vectors, BM25, and
        similarity among the memories the query names, fused by reciprocal rank (``method`` picks
        ``dense`` or ``lexical`` alone). ``scope`` (a session, an agent, a domain, a task type, a
        turn-aware viewer) acts inside each ranking, so what is out of scope never takes a candidate's
        place. The same query gives the same first results whatever ``limit``
        (``retrieve.ranking.tiers``); a line that repeats the words of one ranked before it comes after
        the rest of its tier (``echoes_last``). A hybrid search whose question names a date also
        ranks the memories dated then (``dated_scope``) and fuses that ranking in
        (``retrieve.ranking.with_dated``); every hybrid search lifts the line after a line that asks
        next to it (``retrieve.answers``) and re-ranks the first of the fused ranking
        (``retrieve.rerank``). With ``context``, each hit comes with up to that many memories
        recorded on each side of it in its session (``retrieve.context``)."""
        if limit <= 0 or self.index.empty():
            return []
        asked = self._asked(query, (scope or SearchFilter()).normalized(), method)
        chosen: list[tuple[str, float]] = []
        memories = KnownMemories(self.index)
        for pool in tiers(limit):
            ranked = self._ranked(asked, pool, memories)
            if value_goal and value_weight > 0:
                ranked = self.values.rank(ranked, segment(value_goal), value_weight)
            chosen += _new(echoes_last(ranked, limit, memories), chosen)[: pool - len(chosen)]
            if len(chosen) >= limit or len(ranked) < pool:  # enough, or the scope has no more
                break
        hits = self._hits(
            chosen[:limit], memories.read([memory_id for memory_id, _ in chosen[:limit]]), asked.scope
        )
        return self._with_context(hits, context, asked.scope) if context > 0 else hits

    def _asked(self, query: str, scope: SearchFilter, method: Method) -> Asked:
        """What a search asks: the query, its vector without the speakers it names, and for a
        hybrid search the days it asks about."""
        if method == "lexical":
            return Asked(query, None, scope, method)
        speakers = self.index.speakers(query_names(query))
        vector = self._query_vector(without_speakers(query, speakers))
        dated = dated_scope(scope, query) if method == "hybrid" else None
        return Asked(query, vector, scope, method, speakers, dated)

    def _ranked(self, asked: Asked, pool: int, memories: KnownMemories) -> list[tuple[str, float]]:
        """The index's ranking of ``pool`` candidates per ranking; for ``hybrid``, with the memories
        dated when the question asks about fused in (``retrieve.ranking.with_dated``), answers
        lifted next to their questions (``retrieve.answers``) and the head re-ranked
        (``retrieve.rerank``)."""
        ranked = self.index.ranked(asked.query, asked.vector, pool, asked.scope, asked.method)
        if asked.method != "hybrid":
            return ranked
        if asked.dated is not None:
            dated = self.index.ranked(asked.query, asked.vector, pool, asked.dated, asked.method)
            ranked = with_dated(ranked, dated)
        answers = self._answers(ranked, asked, memories)
        lifted = answers_lifted(ranked, answers)
        return self._reranked(lifted, asked, set(answers.values()), memories)

    def _reranked(
        self, ranked: list[tuple[str, float]], asked: Asked, answers: set[str], memories: KnownMemories
    ) -> list[tuple[str, float]]:
        """The first ``retrieve.rerank.DEPTH`` of ``ranked`` in the re-ranking's order."""
        head = [memory_id for memory_id, _ in ranked[:DEPTH]]
        known = memories.read(head)
        candidates = {
            memory_id: Candidate(
                memories.words(memory_id),
                speaker_name(known[memory_id]) in asked.speakers,
                asks(known[memory_id].text),
                memory_id in answers,
                own_day(known[memory_id]),
                says_when(known[memory_id].text),
            )
            for memory_id in head
            if memory_id in known
        }
        query_words = frozenset(query_terms(asked.query))
        return reranked(ranked, candidates, query_words, asks_when(asked.query))

    def _answers(
        self, ranked: list[tuple[str, float]], asked: Asked, memories: KnownMemories
    ) -> dict[str, str]:
        """For each line that asks among the first ``ASKED_IN`` of ``ranked``, the line recorded next
        in its session, when a speaker the query names said it (any speaker when it names none)."""
        first = [memory_id for memory_id, _ in ranked[:ASKED_IN]]
        known = memories.read(first)
        questions = [memory_id for memory_id in first if memory_id in known and asks(known[memory_id].text)]
        sources = self.index.attribute(questions, asked.scope)
        found: dict[str, str] = {}
        for question in (memory_id for memory_id in questions if memory_id in sources):
            around = self.index.neighbours(question, sources[question], 1, asked.scope)
            found.update((question, memory_id) for offset, memory_id, _ in around if offset == 1)
        said = memories.read(list(found.values()))
        return {
            question: answer
            for question, answer in found.items()
            if answer in said and (not asked.speakers or speaker_name(said[answer]) in asked.speakers)
        }

    def _query_vector(self, query: str) -> Sequence[float]:
        """The vector of ``query``, what the dense and named rankings compare with."""
        self._index_missing_vectors()
        self.index.warm()  # while the embedder may still be loading (``mem0_config.warm_embedder``)
        return self.embedding.embed([query])[0]

    def _hits(
        self, chosen: list[tuple[str, float]], memories: Mapping[str, IndexedMemory], scope: SearchFilter
    ) -> list[MemoryHit]:
        """The chosen memories, each shown as the source that makes it visible in ``scope``; a memory
        deleted or out of sight since it was ranked is left out."""
        sources = self.index.attribute(memories, scope)
        return [
            MemoryHit(memory_id, memories[memory_id].text, score, memories[memory_id], sources[memory_id])
            for memory_id, score in chosen
            if memory_id in memories and memory_id in sources
        ]

    def _with_context(self, hits: list[MemoryHit], count: int, scope: SearchFilter) -> list[MemoryHit]:
        """Each hit with the memories recorded around it in its session."""
        placed = {hit.id: self.index.neighbours(hit.id, hit.source, count, scope) for hit in hits}
        memories = self.index.get(memory_id for found in placed.values() for _, memory_id, _ in found)
        return [
            replace(
                hit,
                context=tuple(
                    ContextTurn(offset, memory_id, memories[memory_id].text, source)
                    for offset, memory_id, source in placed[hit.id]
                    if memory_id in memories
                ),
            )
            for hit in hits
        ]

    def _index_missing_vectors(self) -> None:
        """Stores made before the index kept vectors get them once, from the text they indexed."""
        while batch := self.index.without_vectors(BACKFILL_BATCH):
            vectors = self.embedding.embed([text for _, text in batch])
            self.index.set_vectors(
                {memory_id: vector for (memory_id, _), vector in zip(batch, vectors, strict=True)}
            )


@dataclass(frozen=True)
class Asked:
    """One search's question: its words, its vector (embedded without the speakers it names:
    ``retrieve.names``, where a name in the embedder is a likeness to every line that says it), its
    scope and method, the speakers it names, and the scope narrowed to the days it asks about."""

    query: str
    vector: Sequence[float] | None
    scope: SearchFilter
    method: Method
    speakers: frozenset[str] = frozenset()
    dated: SearchFilter | None = None


def own_day(memory: IndexedMemory) -> str:
    """The day a memory was said: an imported ``timestamp`` read as a date (as written when it is no
    form ``record.dates`` reads), else the day it was stored."""
    written = str(memory.first.extra.get("timestamp") or "")
    said = said_on(written) if written else None
    return said.isoformat() if said else written or memory.created_at[:10]


def speaker_name(memory: IndexedMemory) -> str:
    """Who said ``memory``, written as a name (as queries name speakers)."""
    return as_name(speaker_of(memory.role, memory.first.agent_id, memory.first.extra))


class KnownMemories:
    """The memories one search has read from the index, each read once, and their words, each found
    once (the second stage and the echoes both compare them)."""

    def __init__(self, index: StoreIndex):
        self.index = index
        self.known: dict[str, IndexedMemory] = {}
        self._words: dict[str, frozenset[str]] = {}

    def read(self, ids: list[str]) -> dict[str, IndexedMemory]:
        """Those of ``ids`` still in the index (deleted ones are left out)."""
        self.known |= self.index.get(memory_id for memory_id in ids if memory_id not in self.known)
        return self.known

    def words(self, memory_id: str) -> frozenset[str]:
        """The terms of a memory already read (``store.index.terms.terms``)."""
        if memory_id not in self._words:
            self._words[memory_id] = frozenset(terms(self.known[memory_id].text))
        return self._words[memory_id]


def dated_scope(scope: SearchFilter, query: str) -> SearchFilter | None:
    """``scope`` narrowed to the days ``query`` asks about (``record.dates.query_span``: the date it
    writes out, else its one relative date, resolved against today); None when it names none, or
    when those days leave nothing of the scope's own span, or all of it."""
    span = query_span(query, today())
    if span is None:
        return None
    since = max(day for day in (scope.since, span[0]) if day is not None)
    until = min(day for day in (scope.until, span[1]) if day is not None)
    if since > until or (since, until) == (scope.since, scope.until):
        return None
    return replace(scope, since=since, until=until)


def echoes_last(
    ranked: list[tuple[str, float]], wanted: int, memories: KnownMemories
) -> list[tuple[str, float]]:
    """``ranked`` with each echo after every first saying: a memory whose text holds the same words as
    one ranked before it (the same stock line said on other days, "Nora, that's wonderful news!",
    is a memory of each day) keeps its order among the echoes, after the rest, so repeats do not fill
    the first places. Read ``wanted`` memories at a time, until ``wanted`` first sayings are found:
    the first ``wanted`` places are those of the whole list so ordered, the rest stay as ranked."""
    said: set[frozenset[str]] = set()
    first: list[tuple[str, float]] = []
    echoes: list[tuple[str, float]] = []
    read = 0
    while read < len(ranked) and len(first) < wanted:
        chunk = ranked[read : read + wanted]
        read += len(chunk)
        known = memories.read([memory_id for memory_id, _ in chunk])
        for pair in chunk:
            memory = known.get(pair[0])
            words = memories.words(pair[0]) if memory is not None else frozenset([pair[0]])
            (echoes if words in said else first).append(pair)
            said.add(words)
    return first + echoes + ranked[read:]


def _new(ranked: list[tuple[str, float]], chosen: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """What ``ranked`` holds beyond the memories already ``chosen`` by a smaller tier."""
    taken = {memory_id for memory_id, _ in chosen}
    return [pair for pair in ranked if pair[0] not in taken]

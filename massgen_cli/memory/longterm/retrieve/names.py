"""The names a query gives, and the memories they name (pure functions).

A query names a speaker when any run of one to three of its words is that speaker's name, whatever
its case ("What did walrus adopt?" names the agent ``walrus``); it names an entity with a capitalised
word inside a sentence ("What did Walrus adopt?" names the entity ``walrus`` too). The memories a
query names are those of a named speaker or that mention a named entity: every index ranks them by
similarity as a third ranking, fused with the other two (``retrieve.ranking``), so a question about
someone finds their memories first and the look-alikes of others after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from massgen_cli.memory.longterm.record.names import COMMON_WORDS, capitalised, name_words
from massgen_cli.memory.longterm.retrieve.sql import SQLITE, SqlDialect

SPEAKER_WORDS = 3
"""The longest speaker name a query is read for, in words."""
_SENTENCE_END = re.compile(r"[.!?\n]+\s*")


@dataclass(frozen=True)
class QueryNames:
    """The speaker names and the entities a query gives, each once, in the order they appear."""

    speakers: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.speakers or self.entities)


def query_names(query: str) -> QueryNames:
    """Every run of up to ``SPEAKER_WORDS`` words that could be a speaker's name, and the capitalised
    words that are not the first of their sentence."""
    speakers: dict[str, None] = {}
    entities: dict[str, None] = {}
    for sentence in _SENTENCE_END.split(query):
        words = name_words(sentence)
        folded = [word.casefold() for word in words]
        for size in range(1, SPEAKER_WORDS + 1):
            for start in range(len(folded) - size + 1):
                run = folded[start : start + size]
                if not all(word in COMMON_WORDS for word in run):
                    speakers[" ".join(run)] = None
        entities.update((word.casefold(), None) for word in words[1:] if capitalised(word))
    return QueryNames(tuple(speakers), tuple(entities))


def named_condition(names: QueryNames, dialect: SqlDialect = SQLITE) -> tuple[str, list[Any]]:
    """The condition on ``memories m`` for a memory that ``names`` names (its speaker or an entity)."""
    clauses: list[str] = []
    params: list[Any] = []
    for kind, wanted in (("speaker", names.speakers), ("entity", names.entities)):
        if wanted:
            one_of, more = dialect.one_of("n.name", wanted)
            clauses.append(f"(n.kind = '{kind}' AND {one_of})")
            params += more
    if not clauses:
        return "1=0", []
    found = f"SELECT n.memory_id FROM {{names}} n WHERE {' OR '.join(clauses)}"
    return f"m.id IN ({dialect.render(found)})", params

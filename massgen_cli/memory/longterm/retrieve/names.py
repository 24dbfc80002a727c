"""The speakers a query names, and their memories (pure functions).

A query names a speaker when any run of one to three of its words is that speaker's name, whatever
its case ("What did walrus adopt?" names the agent ``walrus``). Every index ranks the named speakers'
memories by similarity as a third ranking, fused with the other two (``retrieve.ranking``), so a
question about someone finds their own words first and the look-alikes of others after.

A memory that merely mentions a name does not count: in real talk people address each other by name
("Wow, Caroline, that looks amazing!"), so for "What did Caroline research?" such lines said *to*
Caroline crowded out hers. Measured on real conversations (benchmarks/real_dialogues.py, any@1/@5/@10):
speakers alone 0.409/0.684/0.766; with the memories mentioning a name the query gives ranked with
them 0.143/0.414/0.638; mentions as a fourth ranking of weight 0.25 0.404/0.678/0.759, of 0.5
0.393/0.670/0.750.

The question is embedded without the speakers it names (``without_speakers``): the speaker is a
field of its own (the named ranking), and the embedder reads a name in a question as a likeness to
every line that says it, so "When did Caroline go to the LGBTQ support group?" was closest to
"Wow, Caroline! They must have felt so appreciated." Measured on the same conversations, dense alone
went from any@1/@5/@10 0.083/0.236/0.328 to 0.242/0.553/0.658 with the names taken out (0.247/0.536/
0.664 with the question words "when", "what", "did"... taken out as well, 0.263/0.533/0.651 without
every stop word: the names alone it is), and the named ranking from 0.293/0.587/0.676 to
0.337/0.625/0.714.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from massgen_cli.memory.longterm.record.names import COMMON_WORDS, name_words
from massgen_cli.memory.longterm.retrieve.sql import SQLITE, SqlDialect

SPEAKER_WORDS = 3
"""The longest speaker name a query is read for, in words."""
_SENTENCE_END = re.compile(r"[.!?\n]+\s*")


@dataclass(frozen=True)
class QueryNames:
    """The speaker names a query may give, each once, in the order they appear."""

    speakers: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.speakers)


def query_names(query: str) -> QueryNames:
    """Every run of up to ``SPEAKER_WORDS`` words that could be a speaker's name."""
    speakers: dict[str, None] = {}
    for sentence in _SENTENCE_END.split(query):
        folded = [word.casefold() for word in name_words(sentence)]
        for size in range(1, SPEAKER_WORDS + 1):
            for start in range(len(folded) - size + 1):
                run = folded[start : start + size]
                if not all(word in COMMON_WORDS for word in run):
                    speakers[" ".join(run)] = None
    return QueryNames(tuple(speakers))


def without_speakers(query: str, speakers: Iterable[str]) -> str:
    """``query`` without the ``speakers`` it names (each a name as ``record.names.as_name`` writes it,
    in any case, with a possessive ``'s``), what the embedder reads of it; the query itself when
    nothing else would be left."""
    left = query
    for speaker in speakers:
        words = r"\W+".join(re.escape(word) for word in speaker.split())
        left = re.sub(rf"(?<![\w-]){words}(?![\w-])(?:['’]s\b)?", " ", left, flags=re.IGNORECASE)
    left = " ".join(left.split())
    return left if any(character.isalnum() for character in left) else query


def named_condition(names: QueryNames, dialect: SqlDialect = SQLITE) -> tuple[str, list[Any]]:
    """The condition on ``memories m`` for a memory of a speaker ``names`` names."""
    if not names:
        return "1=0", []
    one_of, params = dialect.one_of("n.name", names.speakers)
    found = f"SELECT n.memory_id FROM {{names}} n WHERE n.kind = 'speaker' AND {one_of}"
    return f"m.id IN ({dialect.render(found)})", list(params)

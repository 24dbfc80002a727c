"""Terms for the lexical ranking: words in lower case, stemmed by the Porter algorithm (Snowball's).

The index stores each memory's terms as its lexical text (FTS5 then only splits on spaces), so the
terms a search counts are exactly the ones FTS5 matched: BM25 can be computed here, with the
statistics of the search's own scope, from what the index returns."""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

import snowballstemmer

from massgen_cli.memory.longterm.record.dates import dates_of, own_date, query_dates, today

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""Runs of letters and digits: an underscore splits words, as it splits FTS5's tokens (``agent_a`` is
two terms), so a memory's length in terms is the same for FTS5 and for every index that counts them."""
STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has",
        "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our",
        "she", "so", "that", "the", "their", "them", "they", "this", "to", "was", "we", "were", "what",
        "when", "where", "which", "who", "why", "will", "with", "you", "your",
    )
)  # fmt: skip
_STEMMER = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """Every word of ``text``, lower case and stemmed, in order (what a memory is indexed as)."""
    return [term for word in _WORD.findall(text.lower()) if (term := stem(word))]


def memory_terms(indexed: str, text: str) -> list[str]:
    """What a memory is indexed as: the terms of its indexed text, those of its own date in words
    that its date as written lacks (``2023-05-08`` adds ``8`` and ``may``), then those of the dates its
    relative dates name (``record.dates``), so a question about the day finds what was said on it and
    about it."""
    found = terms(indexed)
    written = set(found)
    dated = [term for term in terms(own_date(indexed, text)) if term not in written]
    return found + dated + terms(" ".join(dates_of(indexed, text)))


def query_terms(text: str, on: date | None = None) -> list[str]:
    """The distinct terms of a query, without the words too common to tell memories apart, then those
    of the dates it names (``record.dates.query_dates``: relative dates resolved against ``on``, by
    default today), as memories' dates are indexed."""
    said = " ".join(query_dates(text, on or today()))
    stems = (stem(word) for word in _WORD.findall(f"{text} {said}".lower()) if word not in STOPWORDS)
    return list(dict.fromkeys(term for term in stems if term))


def fts_query(terms_wanted: list[str]) -> str:
    """An FTS5 query that matches any of the terms (quoted, so no term is read as an operator)."""
    return " OR ".join(f'"{term}"' for term in terms_wanted)

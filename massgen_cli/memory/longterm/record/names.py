"""Who a memory is about: its speaker and the names its text mentions, as the index keeps them (pure
functions). A search that names someone ranks their memories ahead of look-alikes
(``retrieve.names``).

A name is written as queries are read: words of letters, digits, underscores and inner hyphens,
joined by one space, in lower case (``Dr. Smith`` is ``dr smith``, ``agent_a`` stays ``agent_a``).
The speaker is the one a memory's indexed text names (``[<date>] <speaker>: <text>``: an imported
``speaker``, ``user`` for the user's words, the agent's id for an agent's). The entities are the
capitalised words of the text that are not common words ("Biscuit", "Lisbon", "Walrus"); a word that
starts a sentence counts too, which a query never matches unless it names that word
(``retrieve.names`` reads a query's names from its capitalised words inside a sentence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from massgen_cli.memory.longterm.record.memories import header_of

_NAME_WORD = re.compile(r"\w+(?:-\w+)*")
COMMON_WORDS = frozenset(
    (
        "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because",
        "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
        "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "is", "it", "its", "just",
        "me", "my", "no", "not", "of", "oh", "ok", "okay", "on", "or", "our", "she", "so", "that", "the",
        "their", "them", "then", "there", "these", "they", "this", "those", "to", "was", "we", "well",
        "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "yes", "you",
        "your",
    )
)  # fmt: skip
"""Words that are no one's name, whatever their case (a sentence's first word is capitalised)."""


@dataclass(frozen=True)
class MemoryNames:
    """A memory's speaker (empty when its indexed text names none) and the entities of its text."""

    speaker: str
    entities: tuple[str, ...]

    def rows(self) -> list[tuple[str, str]]:
        """``(kind, name)`` as the index keeps them: ``speaker`` and ``entity``."""
        speaker = [("speaker", self.speaker)] if self.speaker else []
        return speaker + [("entity", entity) for entity in self.entities]


def name_words(text: str) -> list[str]:
    """The words of ``text`` that names are made of, as written."""
    return _NAME_WORD.findall(text)


def as_name(text: str) -> str:
    """``text`` written as a name: its words, lower case, one space between them."""
    return " ".join(name_words(text)).casefold()


def capitalised(word: str) -> bool:
    return word[:1].isupper() and word.casefold() not in COMMON_WORDS


def entities_of(text: str) -> tuple[str, ...]:
    """The capitalised words of ``text`` that are not common words, as names, each once."""
    return tuple(dict.fromkeys(word.casefold() for word in name_words(text) if capitalised(word)))


def speaker_in(indexed: str, text: str) -> str:
    """The speaker that ``indexed`` (``[<date>] <speaker>: <text>``) names for ``text``; empty when it
    is the text alone."""
    header = header_of(indexed, text)
    return as_name(header[1]) if header else ""


def memory_names(indexed: str, text: str) -> MemoryNames:
    """The names of a memory from what the index holds of it: its indexed text and its text."""
    return MemoryNames(speaker_in(indexed, text), entities_of(text))

"""Who a memory is about: its speaker, as the index keeps it (pure functions). A search that names
someone ranks their memories ahead of look-alikes (``retrieve.names``, which says why the names a
text merely mentions do not count).

A name is written as queries are read: words of letters, digits, underscores and inner hyphens,
joined by one space, in lower case (``Dr. Smith`` is ``dr smith``, ``agent_a`` stays ``agent_a``).
The speaker is the one a memory's indexed text names (``[<date>] <speaker>: <text>``: an imported
``speaker``, ``user`` for the user's words, the agent's id for an agent's).
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
    """A memory's speaker (empty when its indexed text names none)."""

    speaker: str

    def rows(self) -> list[tuple[str, str]]:
        """``(kind, name)`` as the index keeps them: the ``speaker``."""
        return [("speaker", self.speaker)] if self.speaker else []


def name_words(text: str) -> list[str]:
    """The words of ``text`` that names are made of, as written."""
    return _NAME_WORD.findall(text)


def as_name(text: str) -> str:
    """``text`` written as a name: its words, lower case, one space between them."""
    return " ".join(name_words(text)).casefold()


def speaker_in(indexed: str, text: str) -> str:
    """The speaker that ``indexed`` (``[<date>] <speaker>: <text>``) names for ``text``; empty when it
    is the text alone."""
    header = header_of(indexed, text)
    return as_name(header[1]) if header else ""


def memory_names(indexed: str, text: str) -> MemoryNames:
    """The names of a memory from what the index holds of it: its indexed text and its text."""
    return MemoryNames(speaker_in(indexed, text))

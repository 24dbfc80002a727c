"""The lexical ranking's stems are Snowball's Porter stems whichever build makes them: PyStemmer's C
build (installed with the package) gives every word the stem the pure Python one gives, so an index
written where one was used is searched rightly where the other is."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from snowballstemmer.porter_stemmer import PorterStemmer

from massgen_cli.memory.longterm.store.index.terms import stem

WORD = re.compile(r"[^\W_]+")


def sample_words() -> list[str]:
    """Every word of this package's and the standard library's sources (some 37k words: code,
    English prose, names, numbers, a few letters beyond ASCII)."""
    words: set[str] = set()
    sources = [*Path(__file__).resolve().parents[3].joinpath("massgen_cli").rglob("*.py")]
    sources += sorted(Path(re.__file__).parents[1].rglob("*.py"))[:1500]
    for source in sources:
        words.update(WORD.findall(source.read_text(encoding="utf-8", errors="ignore").lower()))
    words.update(["running", "ponies", "caresses", "généralement", "naïve", "straße", "über", "年"])
    return sorted(words)


def test_the_c_build_is_the_one_in_use():
    stem("warming")
    assert "Stemmer" in sys.modules, "PyStemmer is a dependency"


def test_every_word_gets_the_pure_python_porter_stem():
    pure = PorterStemmer()
    words = sample_words()
    assert len(words) > 10_000
    assert [word for word in words if stem(word) != pure.stemWord(word)] == []

"""Bringing an index made by an earlier version to today's text form, once, when it is opened.

Earlier indexes held ``<date> · turn <N> · <speaker>: <text>`` as the indexed text (in the lexical
table, stemmed by FTS5's porter tokenizer), embedded that text, and keyed memories by their text alone.
Today's lexical form is ``[<date>] <speaker>: <text>``, keyed with its speaker and date, with its terms
in the lexical table and their count in ``length``; the embedder reads the text alone. Each memory's
vector is cleared so the next dense search embeds the text (``MemorySearch`` fills missing vectors
before it ranks). Indexes of the second form split words at underscores since: their terms are made
again from the indexed text, which stays as it is (keys and vectors too). Indexes made before the index
kept names (a memory's speaker, ``record.names``), the dates a memory's relative dates name and its own
date (in words among its terms, and as the day date filters compare: ``record.dates``) get them from
the indexed text, once; the names an index of the third form kept of the words a text mentions
(``entity``, no longer ranked: ``retrieve.names``) go."""

from __future__ import annotations

import re
import sqlite3
from datetime import date

from massgen_cli.memory.longterm.record.dates import memory_day
from massgen_cli.memory.longterm.record.keys import memory_key
from massgen_cli.memory.longterm.record.memories import indexed_text
from massgen_cli.memory.longterm.record.names import memory_names
from massgen_cli.memory.longterm.store.index.terms import memory_terms

TEXT_FORM = "3"
_OLD_HEADER = re.compile(r"^(?P<date>.*?) · turn -?\d+ · (?P<speaker>[^\n]*?): ", re.DOTALL)
LEXICAL_TABLE = "memories_fts USING fts5(id UNINDEXED, body, tokenize = 'unicode61')"
"""The lexical table (its terms are ours, so FTS5 only splits on spaces)."""
BUMP_GENERATION = (
    "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT (name) DO UPDATE "
    "SET value = CAST(value AS INTEGER) + 1"
)
"""Tells every process that holds vectors in memory that some were removed or replaced."""


def upgrade_text_form(db: sqlite3.Connection) -> None:
    """Rewrite every memory in today's form, in one transaction (another process opening the same index
    waits, then finds it done)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        form = db.execute("SELECT value FROM meta WHERE name = 'text_form'").fetchone()
        if form is not None and form[0] == "2":
            _split_terms(db)
        elif form is None or form[0] != TEXT_FORM:
            _rewrite(db)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('text_form', ?)", (TEXT_FORM,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _rewrite(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT m.id, m.text, m.domain, m.task_type, f.body FROM memories m "
        "LEFT JOIN memories_fts f ON f.id = m.id"
    ).fetchall()
    db.execute("DROP TABLE IF EXISTS memories_fts")
    db.execute(f"CREATE VIRTUAL TABLE {LEXICAL_TABLE}")
    for memory_id, text, domain, task_type, old_body in rows:
        indexed = _today_form(text, old_body or text)
        lexical = memory_terms(indexed, text)
        db.execute(
            "UPDATE memories SET indexed = ?, length = ?, key = ?, vector = NULL WHERE id = ?",
            (indexed, len(lexical), memory_key(indexed, domain, task_type), memory_id),
        )
        db.execute("INSERT INTO memories_fts VALUES (?, ?)", (memory_id, " ".join(lexical)))
    if rows:
        db.execute(BUMP_GENERATION)


def _split_terms(db: sqlite3.Connection) -> None:
    """Each memory's terms made again from its indexed text (words now split at underscores)."""
    rows = db.execute("SELECT id, coalesce(indexed, text), text FROM memories").fetchall()
    db.execute("DELETE FROM memories_fts")
    for memory_id, indexed, text in rows:
        lexical = memory_terms(indexed, text)
        db.execute("UPDATE memories SET length = ? WHERE id = ?", (len(lexical), memory_id))
        db.execute("INSERT INTO memories_fts VALUES (?, ?)", (memory_id, " ".join(lexical)))


def _today_form(text: str, old_indexed: str) -> str:
    """The old header's date and speaker around ``text``; a memory indexed as its bare text stays so."""
    header = _OLD_HEADER.match(old_indexed)
    if header is None:
        return text
    return indexed_text(text, header["speaker"], header["date"])


INDEX_FORM = "4"
"""Every index (local, PostgreSQL, Qdrant) of this form keeps its memories' speakers, the dates relative
dates name, and each memory's own date (in words among its terms, and as its day); one of an earlier
form gets them when it is opened, and loses the names of the words its texts mention. Kept apart
from the text form, which an earlier version that meets a newer one rewrites."""


def upgrade_index(db: sqlite3.Connection) -> None:
    """What an index of an earlier form lacks, in one transaction: speakers for every memory that has
    none (the names of mentioned words gone), terms made again for the memories whose terms today's
    form counts otherwise (the dates they name), and each memory's day; then the mark that it was
    done."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("SELECT 1 FROM meta WHERE name = 'index_form' AND value = ?", (INDEX_FORM,)).fetchone():
            db.execute("COMMIT")
            return
        rows = db.execute(
            "SELECT id, coalesce(indexed, text), text, length, created_at FROM memories"
        ).fetchall()
        db.execute("DELETE FROM names WHERE kind = 'entity'")
        named = {row[0] for row in db.execute("SELECT DISTINCT memory_id FROM names")}
        db.executemany(
            "INSERT OR IGNORE INTO names VALUES (?, ?, ?)",
            [
                (i, kind, name)
                for i, indexed, text, _, _ in rows
                if i not in named
                for kind, name in memory_names(indexed, text).rows()
            ],
        )
        for memory_id, indexed, text, length, _ in rows:
            lexical = memory_terms(indexed, text)
            if len(lexical) != length:
                _term_again(db, memory_id, lexical)
        db.executemany(
            "UPDATE memories SET day = ? WHERE id = ?",
            [(day_text(memory_day(indexed, text, created)), i) for i, indexed, text, _, created in rows],
        )
        db.execute("INSERT OR REPLACE INTO meta VALUES ('index_form', ?)", (INDEX_FORM,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def day_text(day: date | None) -> str | None:
    """A memory's day as the SQL indexes keep it (ISO, so days compare as text)."""
    return day.isoformat() if day else None


def _term_again(db: sqlite3.Connection, memory_id: str, lexical: list[str]) -> None:
    db.execute("UPDATE memories SET length = ? WHERE id = ?", (len(lexical), memory_id))
    db.execute("DELETE FROM memories_fts WHERE id = ?", (memory_id,))
    db.execute("INSERT INTO memories_fts VALUES (?, ?)", (memory_id, " ".join(lexical)))

"""Which of the names a query gives are speakers the index knows (what the query is embedded
without: ``retrieve.names.without_speakers``)."""

from __future__ import annotations

from massgen_cli.memory.longterm.retrieve.names import QueryNames
from massgen_cli.memory.longterm.store.index.schema import IndexFile


class IndexSpeakers(IndexFile):
    """The speakers of the index's memories, as its names table keeps them."""

    def speakers(self, names: QueryNames) -> frozenset[str]:
        """Those of ``names``' speakers that some memory of the index is said by."""
        if not names:
            return frozenset()
        marks = ", ".join("?" for _ in names.speakers)
        sql = f"SELECT DISTINCT name FROM names WHERE kind = 'speaker' AND name IN ({marks})"
        with self._lock:
            return frozenset(row[0] for row in self._db.execute(sql, names.speakers))

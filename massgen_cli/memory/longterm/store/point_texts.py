"""mem0's vector store with the points it finds given back their texts from the memory index.

A verbatim record's point holds no text (``bulk.POINT_WITHOUT_TEXT``: the index holds it, and every
search and listing of ours reads it there). mem0 reads a point's text in one place that matters: its
fact extraction (``add`` with ``infer=True``) shows the LLM the memories most like the new messages, as
the texts their points hold, so that what is already known is not extracted again. Without this it
was shown ``{"id": "0", "text": ""}`` for every memory recorded verbatim or imported."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from massgen_cli.memory.longterm.store.index.contract import StoreIndex


class PointTexts:
    """Stands for mem0's vector store (everything but ``search`` and ``get`` passes through); a point
    found without its text gets the index's text for its id."""

    def __init__(self, store: Any, index: StoreIndex):
        self.store = store
        self.index = index

    def search(self, *args: Any, **kwargs: Any) -> Any:
        found = self.store.search(*args, **kwargs)
        self._give_texts(found or [])
        return found

    def get(self, *args: Any, **kwargs: Any) -> Any:
        point = self.store.get(*args, **kwargs)
        if point is not None:
            self._give_texts([point])
        return point

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _give_texts(self, points: Iterable[Any]) -> None:
        textless = [
            point
            for point in points
            if isinstance(getattr(point, "payload", None), dict) and not point.payload.get("data")
        ]
        if not textless:
            return
        memories = self.index.get(str(point.id) for point in textless)
        for point in textless:
            if str(point.id) in memories:
                point.payload["data"] = memories[str(point.id)].text

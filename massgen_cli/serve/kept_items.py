"""What a running turn has said, kept for a watcher who comes in late: every item in order with when it
was said, the text an agent streams in one step kept as one item, bounded (a long answer streamed in
many pieces would otherwise be held piece by piece for as long as the run lasts)."""

from __future__ import annotations

from typing import Generic, TypeVar

from massgen_cli.events import AgentStatus, AgentText

REPLAY_STEP_CHARS = 4_000
"""The most characters of one agent's step (of each kind of its text) kept for a late watcher: its last
ones (the page shows the last 3,000)."""
REPLAY_PRESENTATION_CHARS = 100_000
"""The most characters of the final answer's streamed text kept for a late watcher: its first ones (as
many as the page shows; the report keeps it whole)."""

Item = TypeVar("Item")


class KeptItems(Generic[Item]):
    """``items`` in the order they were said, ``at`` when each (by ``id``) was said; the pieces of text
    an agent streams in a step (of one kind) join one item in the place of the first, with its time."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.at: dict[int, float] = {}
        self._streaming: dict[tuple[str, str], int] = {}
        """Where in ``items`` each agent's text of its current step is, by agent and kind."""

    def keep(self, item: Item, at: float) -> None:
        if isinstance(item, AgentStatus):  # a new step, or its end: its text so far stays as it is
            for key in [key for key in self._streaming if key[0] == item.agent_id]:
                del self._streaming[key]
        if not isinstance(item, AgentText):
            self._append(item, at)
            return
        key = (item.agent_id, item.kind)
        where = self._streaming.get(key)
        if where is None:
            self._streaming[key] = len(self.items)
            self._append(item, at)
            return
        kept = self.items[where]
        assert isinstance(kept, AgentText)
        joined = AgentText(item.agent_id, _bounded(kept.text + item.text, item.kind), item.kind)
        self.items[where] = joined  # type: ignore[assignment]  # an AgentText is an Item here
        self.at[id(joined)] = self.at.pop(id(kept))

    def _append(self, item: Item, at: float) -> None:
        self.items.append(item)
        self.at[id(item)] = at


def _bounded(text: str, kind: str) -> str:
    """A step's streamed text as a late watcher gets it: its last characters; the final answer's first."""
    if kind == "presentation":
        return text[:REPLAY_PRESENTATION_CHARS]
    return text[-REPLAY_STEP_CHARS:]

"""Learned values in the store: read to reorder a ranking, moved toward the rewards of finished turns.
The arithmetic (``blend``, ``td_update``) is pure and lives in ``retrieve.values``; this is where it
meets the index."""

from __future__ import annotations

from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.retrieve.values import DEFAULT_VALUE, ValueUpdate, blend, td_update
from massgen_cli.memory.longterm.store.index.contract import StoreIndex


class ValueLearning:
    """Each memory's value per goal, as the index keeps it."""

    def __init__(self, index: StoreIndex):
        self.index = index

    def rank(self, fused: list[tuple[str, float]], goal: str, weight: float) -> list[tuple[str, float]]:
        """Similarity (normalised by the best score) blended with each memory's learned value."""
        if not fused:
            return fused
        best = fused[0][1]
        values = self.index.values((memory_id for memory_id, _ in fused), goal)
        scored = [(i, blend(score / best, values.get(i, DEFAULT_VALUE), weight)) for i, score in fused]
        return sorted(scored, key=lambda pair: pair[1], reverse=True)

    def update(self, updates: list[ValueUpdate], goal: str, alpha: float) -> dict[str, float]:
        """Move each memory's value for ``goal`` toward its reward; returns the new values."""
        goal = segment(goal)
        current = self.index.values((u.memory_id for u in updates), goal)
        new_values = {}
        for update in updates:
            value = td_update(
                current.get(update.memory_id, DEFAULT_VALUE), update.reward, update.trace, alpha
            )
            self.index.set_value(update.memory_id, goal, value)
            new_values[update.memory_id] = value
        return new_values

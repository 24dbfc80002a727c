"""How much each answer is like the others by meaning, with the offline embedder: what breaks a tie of
agreement scores (``tally.pick_by_agreement``) when the answers share no content words, as a small
model's answers often do ("The answer is 2.", "2 + 2 = 4.", and a paragraph on arithmetic)."""

from __future__ import annotations

from collections.abc import Mapping

from massgen_cli.errors import MemoryStoreError


def likeness(answers: Mapping[str, str]) -> dict[str, float] | None:
    """Each answer's summed cosine similarity to the other answers (the one most like the rest scores
    highest); None when the offline embedder is not installed. Blocks: run it in a worker thread. The
    embedder is imported here: only a tie between answers needs it."""
    from massgen_cli.memory.longterm.store.embedder import shared_local_embedder

    agent_ids = list(answers)
    try:
        vectors = shared_local_embedder().embed_many([answers[agent_id] for agent_id in agent_ids])
    except MemoryStoreError:
        return None
    return {
        agent_id: sum(
            _cosine(vectors[index], vectors[other]) for other in range(len(agent_ids)) if other != index
        )
        for index, agent_id in enumerate(agent_ids)
    }


def _cosine(a: list[float], b: list[float]) -> float:
    """The vectors are unit length, so their dot product is their cosine."""
    return sum(x * y for x, y in zip(a, b, strict=True))

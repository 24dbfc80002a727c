"""What a search may rank, as a Qdrant payload filter: ``retrieve.filters.SearchFilter`` rendered the
way ``retrieve.sql`` renders it for SQL, with the source conditions on the memory's copy of its sources
(a nested filter: one source must meet them all), and the same conditions as a plain predicate for
attribution."""

from __future__ import annotations

from typing import Any

from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.names import QueryNames
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.qdrant.points import day_number


def equals(field: str, value: object) -> Any:
    from qdrant_client import models

    return models.FieldCondition(key=field, match=models.MatchValue(value=value))  # type: ignore[arg-type]


def one_of(field: str, values: list[str]) -> Any:
    from qdrant_client import models

    return models.FieldCondition(key=field, match=models.MatchAny(any=values))


def records_of(kind: str, *conditions: Any) -> Any:
    from qdrant_client import models

    return models.Filter(must=[equals("kind", kind), *conditions])


def memory_filter(scope: SearchFilter, now: float) -> Any:
    """The condition on a memory point for a memory the search may rank."""
    from qdrant_client import models

    alive = models.Filter(
        should=[
            models.IsEmptyCondition(is_empty=models.PayloadField(key="expires_at")),
            models.FieldCondition(key="expires_at", range=models.Range(gt=now)),
        ]
    )
    must: list[Any] = [alive]
    must += [
        equals(field, value)
        for field, value in (("domain", scope.domain), ("task_type", scope.task_type))
        if value
    ]
    if scope.since or scope.until:
        days = models.Range(gte=day_number(scope.since), lte=day_number(scope.until))
        must.append(models.FieldCondition(key="day", range=days))
    if scope.restricts_sources:
        nested = models.Nested(key="sources", filter=source_filter(scope))
        must.append(models.NestedCondition(nested=nested))
    must_not = [] if scope.include_stale else [equals("stale", True)]
    return models.Filter(must=must, must_not=must_not)


def named_filter(names: QueryNames) -> Any:
    """``retrieve.names.named_condition`` on a memory point: a named speaker's."""
    from qdrant_client import models

    return models.Filter(must=[one_of("speaker", list(names.speakers))])


def source_filter(scope: SearchFilter) -> Any:
    """The condition on one copied source for a source that counts."""
    from qdrant_client import models

    must: list[Any] = []
    if scope.session_id:
        must.append(equals("session_id", scope.session_id))
    if scope.agent_id:
        must.append(equals("agent_id", scope.agent_id))
    if scope.viewer is not None:
        must.append(_visible(scope.viewer))
    return models.Filter(must=must)


def _visible(viewer: Viewer) -> Any:
    """``retrieve.visibility``'s condition: the viewer's own sources, and a winner's of an earlier turn."""
    from qdrant_client import models

    before = models.FieldCondition(key="turn", range=models.Range(lt=viewer.turn))
    if not viewer.all_sessions:
        earlier_winner = models.Filter(must=[equals("won", True), before])
        return models.Filter(
            must=[equals("session_id", viewer.session_id)],
            should=[equals("agent_id", viewer.agent_id), earlier_winner],
        )
    later = models.FieldCondition(key="turn", range=models.Range(gte=viewer.turn))
    now_or_later = models.Filter(must=[equals("session_id", viewer.session_id), later])
    other_winner = models.Filter(must=[equals("won", True)], must_not=[now_or_later])
    return models.Filter(should=[equals("agent_id", viewer.agent_id), other_winner])


def counts(scope: SearchFilter, entry: dict[str, Any]) -> bool:
    """Whether a copied source (``agent_id``, ``session_id``, ``turn``, ``won``) counts for ``scope``:
    ``source_filter`` as a predicate, for attribution."""
    if scope.session_id and entry["session_id"] != scope.session_id:
        return False
    if scope.agent_id and entry["agent_id"] != scope.agent_id:
        return False
    viewer = scope.viewer
    if viewer is None:
        return True
    if entry["agent_id"] == viewer.agent_id and (
        viewer.all_sessions or entry["session_id"] == viewer.session_id
    ):
        return True
    if not entry["won"]:
        return False
    if viewer.all_sessions:
        return not (entry["session_id"] == viewer.session_id and entry["turn"] >= viewer.turn)
    return bool(entry["session_id"] == viewer.session_id and entry["turn"] < viewer.turn)

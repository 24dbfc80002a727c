"""mem0's filter dicts (``{"user_id": "massgen", "turn": {"lt": 3}, "OR": [...]}``) as the engine's
filters, with the meaning mem0's own Qdrant store gives them (mem0 2.2.1's ``Qdrant._create_filter``):
a value matches by equality, a list by membership, ``"*"`` matches anything, and ``eq``, ``ne``,
``in``, ``nin``, ``gt``/``gte``/``lt``/``lte`` (dates when every bound is an ISO date) and
``contains``/``icontains`` (text match) are the operators; ``AND``, ``OR`` and ``NOT`` (or ``$and``,
``$or``, ``$not``) take lists of filters."""

from __future__ import annotations

import re
from typing import Any

_LOGICAL = {"$and": "AND", "$or": "OR", "$not": "NOT"}
_RANGE = ("gt", "gte", "lt", "lte")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$")


def edge_filter(filters: dict[str, Any] | None) -> Any:
    """The engine's ``Filter`` for ``filters``; None when nothing is filtered."""
    from qdrant_edge import Filter

    if not filters:
        return None
    must: list[Any] = []
    should: list[Any] = []
    must_not: list[Any] = []
    seen: set[str] = set()
    for key, value in filters.items():
        name = _LOGICAL.get(key, key)
        if name in seen:  # mem0 passes OR and $or for the same conditions
            continue
        seen.add(name)
        if name in ("AND", "OR", "NOT"):
            parts = [edge_filter(_each_filter(name, item)) for item in _listed(name, value)]
            {"AND": must, "OR": should, "NOT": must_not}[name].extend(p for p in parts if p is not None)
        elif (condition := _condition(name, value)) is not None:
            must.append(condition)
    if not (must or should or must_not):
        return None
    return Filter(must=must or None, should=should or None, must_not=must_not or None)


def _listed(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{name} filter value must be a list of filter dicts, got {type(value).__name__}")
    return value


def _each_filter(name: str, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError(f"{name} filter list items must be dicts, got {type(item).__name__}: {item!r}")
    return item


def _condition(key: str, value: Any) -> Any:
    """One field's condition; None for ``"*"`` (any value)."""
    from qdrant_edge import FieldCondition, MatchAny, MatchExcept, MatchText, MatchValue

    if not isinstance(value, dict):
        if value == "*":
            return None
        match = MatchAny(list(value)) if isinstance(value, list) else MatchValue(value)
        return FieldCondition(key=key, match=match)
    operators = set(value)
    if operators & set(_RANGE):
        if operators - set(_RANGE):
            raise ValueError(f"cannot mix range and other operators for field '{key}': {sorted(operators)}")
        return FieldCondition(key=key, range=_range({op: value[op] for op in _RANGE if op in value}))
    if "eq" in value:
        return FieldCondition(key=key, match=MatchValue(value["eq"]))
    if "ne" in value:
        return FieldCondition(key=key, match=MatchExcept([value["ne"]]))
    if "in" in value:
        return FieldCondition(key=key, match=MatchAny(list(value["in"])))
    if "nin" in value:
        return FieldCondition(key=key, match=MatchExcept(list(value["nin"])))
    if "contains" in value or "icontains" in value:
        return FieldCondition(key=key, match=MatchText(str(value.get("contains", value.get("icontains")))))
    raise ValueError(f"unsupported filter operator(s) for field '{key}': {sorted(operators)}")


def _range(bounds: dict[str, Any]) -> Any:
    from qdrant_edge import RangeDateTime, RangeFloat

    if all(isinstance(bound, str) and _ISO_DATE.match(bound) for bound in bounds.values()):
        return RangeDateTime(**bounds)
    return RangeFloat(**{op: float(bound) for op, bound in bounds.items()})

"""The JSON form of the run events, as each line of ``events.jsonl`` holds it: written with
``event_to_dict`` and read back, nested types included, with ``event_from_dict``."""

from __future__ import annotations

import contextlib
import dataclasses
import types
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from massgen_cli.events import RunEvent, StreamEvent


def event_to_dict(event: StreamEvent | RunEvent) -> dict[str, Any]:
    """The JSON form of an event: its fields plus ``type``."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


_RUN_EVENTS: dict[str, type] = {kind.__name__: kind for kind in get_args(RunEvent)}


def event_from_dict(data: Mapping[str, Any]) -> RunEvent:
    """The run event whose JSON form (``event_to_dict``'s, as a log line holds it) ``data`` is, nested
    types included. Keys that are no field (a log line's ``time``) are left out; a field an older line
    lacks takes its default. A ``ValueError`` says why ``data`` is no event of this vocabulary."""
    kind = _RUN_EVENTS.get(str(data.get("type")))
    if kind is None:
        raise ValueError(f"no run event is of type {data.get('type')!r}")
    event: RunEvent = _build(kind, data)
    return event


def _build(kind: type, data: Any) -> Any:
    """A ``kind`` dataclass from the fields ``data`` holds, each decoded as its annotation says."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{kind.__name__} is not an object: {data!r}")
    fields = dataclasses.fields(kind)
    if missing := [f.name for f in fields if f.name not in data and _required(f)]:
        raise ValueError(f"{kind.__name__} lacks {', '.join(missing)}")
    hints = _hints(kind)
    return kind(**{f.name: _decode(hints[f.name], data[f.name]) for f in fields if f.name in data})


@cache
def _hints(kind: type) -> dict[str, Any]:
    return get_type_hints(kind)


def _required(item: dataclasses.Field[Any]) -> bool:
    return item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING


def _decode(hint: Any, value: Any) -> Any:
    """``value``, as JSON holds it, checked against (and made) the type ``hint`` names."""
    origin, args = get_origin(hint), get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value)
    if origin in (Union, types.UnionType):
        for arm in args:
            with contextlib.suppress(ValueError):
                return _decode(arm, value)
    elif origin is list and isinstance(value, list):
        return [_decode(args[0], item) for item in value]
    elif origin is tuple and args[1:] == (Ellipsis,) and isinstance(value, list | tuple):
        return tuple(_decode(args[0], item) for item in value)
    elif origin is dict and isinstance(value, dict):
        return {key: _decode(args[1], item) for key, item in value.items()}  # JSON's keys are strings
    elif hint is Any or (origin is Literal and value in args) or _is_a(value, hint):
        return float(value) if hint is float else value
    raise ValueError(f"{value!r} is not a {hint}")


def _is_a(value: Any, hint: Any) -> bool:
    """JSON's scalars: an integer is a float too; a boolean is no integer."""
    accepted = (int, float) if hint is float else hint
    return (
        isinstance(hint, type) and isinstance(value, accepted) and (hint is bool or type(value) is not bool)
    )

"""A log's JSON read back in the shape this version writes it. Anything with access to the state folder
can rewrite a log, and an older or newer version writes other fields: what the readers get has each
known ``summary.json`` field of its type, or not at all. A text field of another type is shown as its
JSON (``7``, ``[1, 2]``); any other field that does not fit is left out, as an entry of a list or a
mapping that does not fit. Lone surrogates (``"\\ud800"``, valid JSON, no text a terminal or a file can
take) are replaced by U+FFFD."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MISSING: Any = object()
"""What a shape returns for a value that does not fit (the field or entry is left out)."""

Shape = Callable[[Any], Any]
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads(text: str) -> Any:
    """``json.loads``, with lone surrogates replaced (raises what ``json.loads`` raises)."""
    data = json.loads(text)
    return without_surrogates(data) if _SURROGATE_ESCAPE.search(text) else data


def without_surrogates(value: Any) -> Any:
    """``value`` with every string (keys too) free of lone surrogates."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    return value


def text(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return MISSING if value is None else json.dumps(value, ensure_ascii=False)


def optional_text(value: Any) -> Any:
    return None if value is None else text(value)


def whole(value: Any) -> Any:
    return value if isinstance(value, int) and not isinstance(value, bool) else MISSING


def number(value: Any) -> Any:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else MISSING


def optional_number(value: Any) -> Any:
    return None if value is None else number(value)


def flag(value: Any) -> Any:
    return value if isinstance(value, bool) else MISSING


def mapping(of: Shape) -> Shape:
    """A JSON object whose values each have the shape ``of`` (those that do not are left out)."""

    def shaped(value: Any) -> Any:
        if not isinstance(value, dict):
            return MISSING
        return {key: item for key, raw in value.items() if (item := of(raw)) is not MISSING}

    return shaped


def listing(of: Shape) -> Shape:
    """A JSON array whose items each have the shape ``of`` (those that do not are left out)."""

    def shaped(value: Any) -> Any:
        if not isinstance(value, list):
            return MISSING
        return [item for raw in value if (item := of(raw)) is not MISSING]

    return shaped


def record(**fields: Shape) -> Shape:
    """A JSON object with these fields, each of its shape; one that does not fit is left out, and so are
    the keys this version does not know."""

    def shaped(value: Any) -> Any:
        if not isinstance(value, dict):
            return MISSING
        return {
            key: item
            for key, of in fields.items()
            if key in value and (item := of(value[key])) is not MISSING
        }

    return shaped


USAGE = record(
    input_tokens=whole,
    output_tokens=whole,
    cached_tokens=whole,
    reasoning_tokens=whole,
    cost_usd=optional_number,
    estimated=flag,
)
SUMMARY_FIELDS: dict[str, Shape] = {
    "session_id": text,
    "turn": whole,
    "attempt": whole,
    "question": text,
    "answers": mapping(text),
    "votes": listing(record(voter=text, target=text, reason=text)),
    "winner": optional_text,
    "final_answer": optional_text,
    "end_reason": text,
    "usage": mapping(USAGE),
    "timings_s": mapping(number),
    "memory_errors": listing(text),
    "tool_calls": mapping(mapping(whole)),
    "output_folder": optional_text,
    "agent_status": mapping(mapping(text)),
    "warnings": listing(text),
    "total_usage": USAGE,
    "turn_usage": USAGE,
}
"""``summary.json`` as ``TurnResult.to_dict`` writes it."""


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """A ``summary.json`` with each known field of its shape (or left out); other fields as they are."""
    shaped = {key: value for key, value in data.items() if key not in SUMMARY_FIELDS}
    for key, of in SUMMARY_FIELDS.items():
        if key in data and (value := of(data[key])) is not MISSING:
            shaped[key] = value
    return shaped

"""Readable config problems: YAML paths like ``agents[1].backend.type`` and "did you mean" hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def join_path(path: str, key: str | int) -> str:
    """``agents`` + 1 → ``agents[1]``; ``agents[1]`` + ``backend`` → ``agents[1].backend``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def suggest(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{matches[0]}'?)" if matches else ""


def error_path(document: Any, error: Mapping[str, Any], prefix: str = "") -> str:
    """The YAML path of one pydantic error.

    A check that spans a whole mapping reports at the mapping; when its message quotes the value of
    exactly one key there (``unknown backend 'opnai'``), that key is the one to fix, so the path names it.
    """
    path, node = _walk(document, error["loc"], prefix)
    if error["type"] == "value_error" and isinstance(node, dict):
        quoted = [
            key for key, value in node.items() if isinstance(value, str) and f"'{value}'" in error["msg"]
        ]
        if len(quoted) == 1:
            path = join_path(path, str(quoted[0]))
    return path or "(top level)"


def _walk(document: Any, loc: Sequence[str | int], prefix: str) -> tuple[str, Any]:
    path, node = prefix, document
    for part in loc:
        present = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if present:
            path, node = join_path(path, part), node[part]
        elif isinstance(part, str) and isinstance(node, dict) and not _is_tag(part):
            path, node = join_path(path, part), None
    return path, node


def _is_tag(part: str) -> bool:
    return part[:1].isupper() or "[" in part or part.startswith("function-")


def describe_error(error: Mapping[str, Any]) -> str:
    """One sentence for one pydantic error."""
    kind, message = error["type"], error["msg"]
    if kind == "missing":
        return "is required"
    if kind in ("model_type", "dict_type"):
        return f"must be a mapping of keys (got {error.get('input')!r})"
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    if kind == "literal_error":
        allowed = error.get("ctx", {}).get("expected", "")
        got = error.get("input")
        return f"{got!r} is not allowed; expected {allowed}{suggest(str(got), _quoted_words(allowed))}"
    return f"{message[0].lower()}{message[1:]} (got {error.get('input')!r})"


def _quoted_words(text: str) -> list[str]:
    return [part.strip("' ") for part in text.replace(" or ", ",").split(",") if part.strip("' ")]


def repeated(names: list[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    return sorted({name for name in names if names.count(name) > 1})

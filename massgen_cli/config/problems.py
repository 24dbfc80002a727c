"""Readable config problems: YAML paths like ``agents[1].backend.type`` and "did you mean" hints."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

MAX_LINES = 50
"""The most problems a config's loading reports one by one; one more line counts the rest. A file with
thousands of mistakes fails in a screenful, and the lines past the limit are never written (nor their
suggestions looked for)."""
MAX_WARNINGS = 100_000
"""Warnings and notes are each a key the config really has (the YAML reader bounds how many): every one
is said, so ``--validate`` lists all that a run would go without."""


class CappedLines:
    """Lines up to ``MAX_LINES``, and a count of the ones past it. ``stopped``: the search for more was
    given up once past the limit, so the count is only a lower bound."""

    def __init__(self, noun: str, limit: int = MAX_LINES):
        self.noun, self.limit = noun, limit
        self.kept: list[str] = []
        self.more = 0
        self.stopped = False

    def __len__(self) -> int:
        return len(self.kept) + self.more

    @property
    def full(self) -> bool:
        return len(self.kept) >= self.limit

    def add(self, line: str | Callable[[], str]) -> None:
        """Keep ``line``, or only count it once full; a callable is called at once to write the line, or
        never when it would not be kept."""
        if self.full:
            self.more += 1
        else:
            self.kept.append(line() if callable(line) else line)

    def extend(self, lines: Iterable[str | Callable[[], str]]) -> None:
        for line in lines:
            self.add(line)

    def count(self, how_many: int) -> None:
        """Count ``how_many`` lines that were not written out."""
        self.more += how_many

    def give_up_if_past_limit(self) -> bool:
        """Whether more lines than the limit were found; if so, the caller looks for no more and the
        count of the rest becomes a lower bound ("at least N more")."""
        self.stopped = self.stopped or self.more > 0
        return self.more > 0

    def lines(self) -> list[str]:
        """The kept lines, and one counting the rest when there are more."""
        at_least = "at least " if self.stopped else ""
        rest = [f"… and {at_least}{self.more:,} more {self.noun}"] if self.more else []
        return [*self.kept, *rest]


_REST = re.compile(r"… and (at least )?([\d,]+) more \w+")


def counted(lines: list[str]) -> str:
    """How many lines ``lines`` (as ``CappedLines.lines`` gives them) stand for, as words: ``3``, or
    ``at least 104,397`` when the count of the rest is a lower bound."""
    rest = _REST.fullmatch(lines[-1]) if lines else None
    if rest is None:
        return str(len(lines))
    total = len(lines) - 1 + int(rest.group(2).replace(",", ""))
    return f"{rest.group(1) or ''}{total:,}"


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
    return sorted(name for name, times in Counter(names).items() if times > 1)

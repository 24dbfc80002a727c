"""Text for one line of output, and text safe to print on a terminal."""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (and DEL), but for newline and tab."""


def printable(text: str) -> str:
    """``text`` without control characters other than newline and tab: text from outside (a model's
    answer, a log) must not move the cursor, clear the screen or retitle the terminal it is printed on."""
    return _CONTROLS.sub("", text)


def one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace collapsed and its control characters removed, cut to ``limit``
    characters with an ellipsis."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

"""Reading a request's body within what it may cost: its size (413 past it), how many arrays and objects
its JSON holds and how deeply they nest (checked before it is parsed, so no body makes a parser or a
reader of it recurse without end), and text
that cannot be written back (a lone surrogate, which JSON's ``\\ud800`` escape makes): a 400 naming the
parameter that holds it."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from massgen_cli.serve.wire import ApiError, bad_request

MAX_DEPTH = 32
"""How deeply a request's JSON may nest (a chat request needs 5 levels)."""
MAX_CONTAINERS = 100_000
"""How many arrays and objects a request's JSON may hold (2,000 messages of 20 text parts each need
some 44,000)."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_OPENING = frozenset(b"[{")
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""An escaped or encoded UTF-16 surrogate (a pair is fine; only a lone one cannot be written back)."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body; an ``ApiError`` (413) once it is over ``limit`` bytes (the rest unread)."""
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > limit:
            size = f"{limit // 2**20} MB" if limit >= 2**20 else f"{limit // 2**10} kB"
            raise ApiError(413, f"the request body is over {size}", code="too_large")
    return bytes(data)


def read_json(data: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed; a 400 when it is no JSON, holds more than ``MAX_CONTAINERS`` arrays and objects,
    nests deeper than ``max_depth`` or holds a lone surrogate (its ``param`` the path to it:
    ``messages[3].content``)."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if len(brackets) > 2 * MAX_CONTAINERS:
        why = f"the body of the request holds more than {MAX_CONTAINERS:,} arrays and objects"
        raise bad_request(why, code="too_complex")
    if too_deep(brackets, max_depth):
        raise bad_request(f"the body of the request nests deeper than {max_depth} levels", code="too_deep")
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("the body of the request is not valid JSON", code="invalid_json") from None
    if _MAYBE_SURROGATE.search(data) and (where := unwritable(body)) is not None:
        raise bad_request(f"{where or 'the body'} holds a lone surrogate, which is no text", where or None)
    return body


def too_deep(brackets: bytes, max_depth: int) -> bool:
    """Whether the brackets of a JSON text (those outside its strings, in order) open more than
    ``max_depth`` arrays and objects inside each other; found before the text is parsed, and as soon as
    the depth is passed."""
    depth = 0
    for byte in brackets:
        depth += 1 if byte in _OPENING else -1
        if depth > max_depth:
            return True
    return False


def unwritable(value: Any, where: str = "") -> str | None:
    """The path of the first string in ``value`` that is no UTF-8 text (a lone surrogate), or None."""
    if isinstance(value, str):
        return None if _writable(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            if not _writable(key):
                return where or "(a key)"
            if (found := unwritable(item, inner)) is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if (found := unwritable(item, f"{where}[{index}]")) is not None:
                return found
    return None


def _writable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

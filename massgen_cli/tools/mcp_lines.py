"""The lines an MCP server writes on stdout, read with a bound: each line is kept whole up to a limit;
past it only a short tail is kept (the JSON-RPC ``id`` may come last) while the rest is counted and
dropped as it arrives. An oversized answer becomes a valid JSON-RPC message for the same request: a
tool call's result holds the start of its text and a note of the cut; any other answer is an error
that says how to raise the limit.

Pure functions and a small class, no I/O: the stdio transport (``mcp_stdio``) feeds them its chunks."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

TAIL_BYTES = 4096
"""How much of the end of an oversized line is kept, to find an ``id`` written after the result."""

MISSING = object()
"""No ``id`` could be read."""

CUT_META_KEY = "massgen/cut"
"""Marks a tool result this client cut (``_meta``), with the bytes the server sent and those kept."""

PREVIEW_CHARS = 200
"""How much of a line that is not JSON-RPC the user is shown."""

_TEXT_START = re.compile(r'"(?:text|message)"\s*:\s*"')
_DECODER = json.JSONDecoder()


@dataclass
class Line:
    """One line of a server's stdout (without its newline): ``head`` holds its first bytes (all of them
    when it was not cut), ``tail`` its last ``TAIL_BYTES`` past the head, ``size`` how long it was."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytes = b""
    size: int = 0

    @property
    def cut(self) -> bool:
        return self.size > len(self.head)

    def add(self, piece: bytes | memoryview, limit: int) -> None:
        """Count ``piece`` in, keeping it while the head is under ``limit`` and its end in the tail."""
        room = max(limit - len(self.head), 0)
        self.head += piece[:room]
        overflow = piece[room:]
        if overflow:
            self.tail = (self.tail + bytes(overflow[-TAIL_BYTES:]))[-TAIL_BYTES:]
        self.size += len(piece)


class LineSplitter:
    """Splits a byte stream into ``Line``s, keeping at most ``limit`` bytes of a line plus its tail: the
    rest of a long line is counted and dropped as it arrives."""

    def __init__(self, limit: int):
        self.limit = limit
        self._line = Line()

    def feed(self, chunk: bytes) -> Iterator[Line]:
        """The lines ``chunk`` ends; the unfinished rest is kept for the next chunk."""
        view, start = memoryview(chunk), 0
        while True:
            end = chunk.find(b"\n", start)
            self._line.add(view[start:] if end < 0 else view[start:end], self.limit)
            if end < 0:
                return
            line, self._line = self._line, Line()
            yield line
            start = end + 1


@dataclass(frozen=True)
class Oversized:
    """What the head (and tail) of an oversized line tell: the message's ``id``, the top-level key whose
    value was cut (``result``, ``error``, ``params``…), and the start of its text."""

    id: Any
    cut_key: str
    text: str


def read_oversized(line: Line) -> Oversized:
    """The ``id``, the cut key and the text start of an oversized line (``id`` is ``MISSING`` when it
    could be read neither before the cut nor in the tail)."""
    head = line.head.decode("utf-8", errors="ignore")
    pairs, cut_key, cut_at = top_level_pairs(head)
    message_id = pairs.get("id", MISSING)
    if message_id is MISSING:
        message_id = id_in_tail(line.tail)
    return Oversized(message_id, cut_key, text_start(head[cut_at:]) if cut_at >= 0 else "")


def top_level_pairs(text: str) -> tuple[dict[str, Any], str, int]:
    """The top-level key/value pairs of a JSON object cut short, up to the first value that does not
    end within ``text``; with that value's key and its offset (-1 and '' when none was cut)."""
    pairs: dict[str, Any] = {}
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return pairs, "", -1
    position += 1
    while True:
        position = _skip(text, position)
        try:
            key, position = _DECODER.raw_decode(text, position)
            position = _skip(text, position)
            if not text.startswith(":", position) or not isinstance(key, str):
                return pairs, "", -1
            value_at = _skip(text, position + 1)
        except ValueError:
            return pairs, "", -1
        try:
            pairs[key], position = _DECODER.raw_decode(text, value_at)
        except ValueError:
            return pairs, key, value_at
        position = _skip(text, position)
        if not text.startswith(",", position):
            return pairs, "", -1
        position += 1


def id_in_tail(tail: bytes) -> Any:
    """The top-level ``id`` in the last bytes of a JSON object, when it comes after the cut value: the
    shortest suffix that, opened with ``{``, parses as an object holding ``id``."""
    text = tail.decode("utf-8", errors="ignore").rstrip()
    for comma in reversed([match.start() for match in re.finditer(",", text)]):
        try:
            found = json.loads("{" + text[comma + 1 :])
        except ValueError:
            continue
        if isinstance(found, dict) and "id" in found:
            return found["id"]
    return MISSING


def text_start(value: str) -> str:
    """The readable start of a cut value: its first text string (a tool result's text, an error's
    message), decoded as far as it goes; else the raw JSON of the value, as far as it goes."""
    match = _TEXT_START.search(value)
    return value if match is None else partial_json_string(value[match.end() :])


def partial_json_string(raw: str) -> str:
    """The content of a JSON string (without its opening quote) that may be cut anywhere, even in an
    escape: decoded up to its closing quote, or up to the last whole character."""
    try:
        return str(_DECODER.raw_decode('"' + raw)[0])
    except ValueError:
        pass
    trimmed = re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", raw)
    if (len(trimmed) - len(trimmed.rstrip("\\"))) % 2:
        trimmed = trimmed[:-1]
    try:
        decoded = str(json.loads('"' + trimmed + '"'))
    except ValueError:
        return trimmed
    return decoded[:-1] if decoded and "\ud800" <= decoded[-1] <= "\udbff" else decoded


def cut_note(line: Line, limit: int) -> str:
    """What the model reads before the kept start of a cut result (first, so a later bound on what the
    model reads cannot drop it)."""
    return (
        f"[The result was cut: the server sent {line.size:,} bytes, more than this server's "
        f"max_result_bytes ({limit:,}); only the start below (from the first {len(line.head):,} bytes) "
        "was kept, the rest was dropped. Ask the tool for less, e.g. a narrower query or a range.]"
    )


def too_long(limit: int) -> str:
    """Why an answer that could not be cut (HTTP) was dropped, and what to do."""
    return (
        f"the answer was longer than this server's max_result_bytes ({limit:,} bytes) and was dropped; "
        "ask the tool for less, or raise max_result_bytes"
    )


def cut_answer(line: Line, limit: int, request_id: Any, method: str, found: Oversized) -> dict[str, Any]:
    """The JSON-RPC message that stands for an oversized answer to ``method``: for a tool call, a result
    (or an error, when the server answered with one) whose text is the start of the real one and the
    note; for anything else, an error that says how to raise the limit.

    The cut result is marked an error at the protocol level, with ``CUT_META_KEY`` in its ``_meta``: the
    session then does not check it against the tool's output schema (its structured part is gone), and
    the client, seeing the mark, gives it to the model as the tool's result."""
    if method == "tools/call":
        note = cut_note(line, limit)
        kept = f"{note}\n\n{found.text}" if found.text else note
        if found.cut_key == "error":
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": kept}}
        cut = {"sent_bytes": line.size, "kept_bytes": len(line.head)}
        result = {"content": [{"type": "text", "text": kept}], "isError": True, "_meta": {CUT_META_KEY: cut}}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}
    why = (
        f"the server's answer to {method or 'a request'} was {line.size:,} bytes, more than its "
        f"max_result_bytes ({limit:,}); raise max_result_bytes in the server's config"
    )
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": why}}


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


@dataclass
class OutputWatch:
    """What a server's stdout showed besides its messages, told once to the user and counted: lines
    that are not JSON-RPC, and answers cut at ``limit``."""

    name: str
    limit: int
    notice: Callable[[str], None] = field(default=lambda _: None)
    unreadable_lines: int = 0
    cut_answers: int = 0

    def unreadable(self, line: Line) -> None:
        self.unreadable_lines += 1
        if self.unreadable_lines == 1:
            start = line.head[: PREVIEW_CHARS * 4].decode("utf-8", errors="replace")[:PREVIEW_CHARS]
            self.notice(
                f"MCP server '{self.name}' wrote a line on stdout that is not a JSON-RPC message; it is "
                f"ignored, and so are any more such lines (a server writes its logs on stderr): {start!r}"
            )

    def cut(self, line: Line, method: str) -> None:
        self.cut_answers += 1
        self.notice(
            f"MCP server '{self.name}' answered {method or 'a request'} with {line.size:,} bytes; only "
            f"the first {self.limit:,} were kept (max_result_bytes)"
        )

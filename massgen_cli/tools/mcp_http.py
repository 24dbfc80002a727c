"""The HTTP client of streamable-http MCP servers, with answers bounded by the server's
``max_result_bytes`` as over stdio: the body of each answer (plain JSON, or server-sent events, one line
at a time) is read with the same bound (``mcp_lines``), and an oversized answer reaches the SDK's
session as the cut answer for the same request. The rest is never held in memory."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.shared._httpx_utils import create_mcp_http_client

from massgen_cli.tools.mcp_lines import (
    MISSING,
    Line,
    LineSplitter,
    OutputWatch,
    cut_answer,
    read_oversized,
    too_long,
)

SSE_DATA = b"data:"


def bounded_http_client(headers: dict[str, str], watch: OutputWatch) -> httpx2.AsyncClient:
    """The SDK's HTTP client for MCP, whose answers are cut past ``watch.limit`` bytes."""
    client = create_mcp_http_client(headers=headers or None)
    client.event_hooks["response"].append(_bound_answers(watch))
    return client


def _bound_answers(watch: OutputWatch) -> Callable[[httpx2.Response], Awaitable[None]]:
    async def bound(response: httpx2.Response) -> None:
        kind = response.headers.get("content-type", "")
        if kind.startswith(("application/json", "text/event-stream")):
            request_id, method = _request_of(response.request)
            response.stream = _BoundedBody(response.stream, watch, request_id, method, kind)

    return bound


def _request_of(request: httpx2.Request) -> tuple[Any, str]:
    """The id and method of the JSON-RPC request a POST carried (``MISSING`` and '' for others)."""
    try:
        message = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return MISSING, ""
    if not isinstance(message, dict) or "id" not in message:
        return MISSING, ""
    return message["id"], str(message.get("method", ""))


class _BoundedBody(httpx2.AsyncByteStream):
    """An answer's body read with the bound: a JSON body whole up to the limit, else its cut answer;
    server-sent events line by line, a cut ``data:`` line replaced by the cut answer."""

    def __init__(self, inner: Any, watch: OutputWatch, request_id: Any, method: str, kind: str):
        self._inner = inner
        self._watch = watch
        self._request = (request_id, method)
        self._events = kind.startswith("text/event-stream")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        limit = self._watch.limit
        if self._events:
            splitter = LineSplitter(limit)
            async for chunk in self._inner:
                lines = [self._event_line(line) for line in splitter.feed(chunk)]
                kept = b"".join(line + b"\n" for line in lines if line is not None)
                if kept:
                    yield kept
            return
        body = Line()
        async for chunk in self._inner:
            body.add(chunk, limit)
        if body.cut:
            answer = self._cut_answer(body)
            if answer is None:
                raise httpx2.StreamError(too_long(limit))
            yield answer
        else:
            yield bytes(body.head)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _event_line(self, line: Line) -> bytes | None:
        """A line of the event stream as the SDK gets it: itself, a cut answer, or nothing."""
        if not line.cut:
            return bytes(line.head)
        if not line.head.startswith(SSE_DATA):
            return None
        data = Line(line.head[len(SSE_DATA) :], line.tail, line.size - len(SSE_DATA))
        answer = self._cut_answer(data)
        return None if answer is None else SSE_DATA + b" " + answer

    def _cut_answer(self, line: Line) -> bytes | None:
        """The cut answer to this POST's request, as JSON; None when the body answers nothing."""
        found = read_oversized(line)
        request_id, method = self._request
        request_id = request_id if found.id is MISSING else found.id
        if request_id is MISSING or found.cut_key not in ("result", "error"):
            return None
        self._watch.cut(line, method)
        answer = cut_answer(line, self._watch.limit, request_id, method, found)
        return json.dumps(answer, ensure_ascii=False).encode()

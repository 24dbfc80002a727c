"""Small pieces every HTTP backend needs: one-line error text, Retry-After, tool-argument JSON, a stream
whose errors become ours."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from massgen_cli.errors import BackendError, BackendTimeoutError, ConnectionFailedError
from massgen_cli.events import StreamEvent
from massgen_cli.text import one_line

MAX_ERROR_TEXT = 300

Opened = TypeVar("Opened")
Failure = TypeVar("Failure", bound=Exception)


def clip(text: str) -> str:
    """Provider error text on one line, cut to a readable length."""
    return one_line(text, MAX_ERROR_TEXT)


def retry_after_seconds(headers: Any) -> float | None:
    """The server's wait hint: ``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date."""
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    seconds = _seconds(value)
    if seconds is not None or not value:
        return seconds
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def decode_tool_arguments(provider: str, tool: str, text: str) -> dict[str, Any]:
    """A streamed tool call's arguments as a JSON object, or a BackendError that says what came."""
    text = text.strip() or "{}"
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        raise BackendError(
            f"{provider} sent arguments for tool '{tool}' that are not valid JSON "
            f"({error.msg}): {clip(text)}",
            provider=provider,
        ) from error
    if not isinstance(arguments, dict):
        raise BackendError(
            f"{provider} sent arguments for tool '{tool}' that are not a JSON object: {clip(text)}",
            provider=provider,
        )
    return arguments


def timeout_error(provider: str, seconds: float) -> BackendTimeoutError:
    return BackendTimeoutError(
        f"{provider} did not answer within {seconds:g} s; "
        "raise 'request_timeout_seconds' if the model is slow",
        provider=provider,
    )


def connection_error(provider: str, base_url: object, opened: bool) -> ConnectionFailedError:
    """A connection that failed, or was cut after the response had begun."""
    what = "was cut mid-response" if opened else "failed"
    return ConnectionFailedError(
        f"the connection to {provider} at {base_url} {what}; check that the server is running, "
        "the address is right and the network is up",
        provider=provider,
    )


async def translated_stream(
    opening: Callable[[], Awaitable[AbstractAsyncContextManager[Opened]]],
    read: Callable[[Opened], AsyncIterator[StreamEvent]],
    failures: type[Failure] | tuple[type[Failure], ...],
    translate: Callable[[Failure, bool], BackendError],
) -> AsyncGenerator[StreamEvent, None]:
    """The events ``read`` takes from the stream that ``opening`` opens (an SDK's streamed response,
    closed at the end); one of the SDK's ``failures`` is raised as ``translate`` makes it ours, told
    whether the stream had opened (a link lost then is no refusal)."""
    opened = False
    try:
        async with await opening() as stream:
            opened = True
            async for event in read(stream):
                yield event
    except failures as error:
        raise translate(error, opened) from error

"""What a provider can send that its SDK does not turn into an API error: a line of the event stream
that is not JSON, bytes that are not UTF-8, an event of a shape the SDK cannot read, a connection that
breaks in a way the SDK does not wrap. Each becomes a ``BackendError`` of that agent, with a message
that says what came; the other agents go on.

The exception types that come from outside the process, and the line each becomes:

- ``json.JSONDecodeError``: the provider sent something that is not JSON (an event or a body);
- ``UnicodeDecodeError``: it sent bytes that are not UTF-8 text;
- ``pydantic.ValidationError``: it sent JSON of a shape its SDK cannot read;
- ``KeyError``, ``IndexError``, ``TypeError``, ``AttributeError``, ``ValueError`` raised while reading
  its stream: the same, a response of an unexpected shape;
- ``httpx2.HTTPError`` (and ``httpx.HTTPError`` when a library in the process uses ``httpx``) and
  ``OSError`` (sockets, TLS): the connection failed (retried while nothing was shown);
- anything else raised by the stream: the stream failed, with the error's type and text.
"""

from __future__ import annotations

import json
import sys

import httpx2
import pydantic

from massgen_cli.backends.provider_errors import clip
from massgen_cli.errors import BackendError, ConnectionFailedError

SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError)


class MalformedResponseError(BackendError):
    """The provider sent something its protocol does not allow (not JSON, not UTF-8, a wrong shape)."""


def stream_failure(provider: str, error: Exception) -> BackendError:
    """The agent's failure for ``error``, raised while one request's response was read."""
    if isinstance(error, json.JSONDecodeError):
        return MalformedResponseError(
            f"{provider} sent data that is not valid JSON ({error.msg} at character {error.pos}): "
            f"{clip(error.doc)}",
            provider=provider,
        )
    if isinstance(error, UnicodeDecodeError):
        return MalformedResponseError(
            f"{provider} sent bytes that are not UTF-8 text ({error.reason} at byte {error.start})",
            provider=provider,
        )
    if isinstance(error, pydantic.ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3])
        return MalformedResponseError(
            f"{provider} sent a response its client cannot read ({problems})", provider=provider
        )
    if isinstance(error, _connection_errors()):
        return ConnectionFailedError(
            f"the connection to {provider} failed while reading its response "
            f"({type(error).__name__}: {clip(str(error)) or 'no detail'})",
            provider=provider,
        )
    what = "a response of an unexpected shape" if isinstance(error, SHAPE_ERRORS) else "a stream that failed"
    return MalformedResponseError(
        f"{provider} sent {what} ({type(error).__name__}: {clip(str(error)) or 'no detail'})",
        provider=provider,
    )


def _connection_errors() -> tuple[type[BaseException], ...]:
    """The SDKs' HTTP errors and the sockets': ``httpx``'s only when something imported it (its errors
    cannot happen otherwise, and importing it would cost every run ~80 ms)."""
    plain_httpx = sys.modules.get("httpx")
    return (httpx2.HTTPError, OSError, *((plain_httpx.HTTPError,) if plain_httpx is not None else ()))


BODY_BYTES = 1_000_000
"""The most of a body that is not an event stream read to report it (or to use a whole completion)."""


async def whole_body(provider: str, response: httpx2.Response) -> object:
    """The JSON of a response that should have been an event stream but is not (a server that ignored
    ``stream``), read up to ``BODY_BYTES``; a ``MalformedResponseError`` saying what came when it is not
    JSON, or when it is an error object."""
    received = bytearray()
    async for chunk in response.aiter_bytes():
        received += chunk[: BODY_BYTES - len(received)]
        if len(received) >= BODY_BYTES:
            break
    kind = response.headers.get("content-type", "no content type")
    text = received.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedResponseError(
            f"{provider} answered with {kind}, not an event stream, and its body is not valid JSON "
            f"({error.msg} at character {error.pos}): {clip(text) or '(empty)'}",
            provider=provider,
        ) from None
    if isinstance(body, dict) and "error" in body:
        detail = body["error"].get("message") if isinstance(body["error"], dict) else body["error"]
        raise BackendError(f"{provider} returned an error: {clip(str(detail))}", provider=provider)
    return body

"""The HTTP client of the provider SDKs, with every response bounded as it arrives: a line of a
response longer than ``MAX_LINE_BYTES`` (no event of a token stream is), or a response larger than
``MAX_RESPONSE_BYTES``, ends that request with a ``MalformedResponseError`` before the SDK holds it
(an SDK buffers a whole line of an event stream, and a whole body, in memory)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import ssl
from collections.abc import AsyncIterator, Callable

import httpx2

from massgen_cli.backends.stream_failures import MalformedResponseError

MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
CONNECTION_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
"""The SDKs' own connection limits, kept (a client given its own transport does not apply them)."""


class BoundedStream(httpx2.AsyncByteStream):
    """A response body that stops with an error past its bounds, counting as the bytes come."""

    def __init__(self, inner: httpx2.AsyncByteStream, provider: str):
        self.inner = inner
        self.provider = provider

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total, line = 0, 0
        async for chunk in self.inner:
            total += len(chunk)
            newline = chunk.rfind(b"\n")
            line = len(chunk) - newline - 1 if newline >= 0 else line + len(chunk)
            if line > MAX_LINE_BYTES:
                raise MalformedResponseError(
                    f"{self.provider} sent a line over {MAX_LINE_BYTES // 2**20} MB (no event of a token "
                    "stream is that long); the response was dropped as it came",
                    provider=self.provider,
                )
            if total > MAX_RESPONSE_BYTES:
                raise MalformedResponseError(
                    f"{self.provider} sent over {MAX_RESPONSE_BYTES // 2**20} MB in one response; the rest "
                    "was not read",
                    provider=self.provider,
                )
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """The usual transport, its responses' bodies bounded; ``on_response_begun`` hears each response
    whose headers have come (the model is working: the process mostly waits from here)."""

    def __init__(self, provider: str, on_response_begun: Callable[[], None] | None = None):
        self.provider = provider
        self.on_response_begun = on_response_begun
        self.inner = httpx2.AsyncHTTPTransport(verify=shared_ssl_context(), limits=CONNECTION_LIMITS)
        with contextlib.suppress(ImportError):  # else loaded by the first connection, inside a step
            importlib.import_module("anyio._backends._asyncio")

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if self.on_response_begun is not None:
            self.on_response_begun()
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=BoundedStream(response.stream, self.provider),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS settings every transport of the process shares (the default's, made once): loading the
    certificate store takes about 0.15 s of CPU, paid per backend otherwise, three times a run of three
    agents and again for each question a batch or a server takes."""
    return httpx2.create_ssl_context()


def bounded_client(
    provider: str, timeout: float, on_response_begun: Callable[[], None] | None = None
) -> httpx2.AsyncClient:
    """An HTTP client for a provider SDK whose responses are bounded (redirects followed, as the SDKs'
    own clients do)."""
    transport = BoundedTransport(provider, on_response_begun)
    return httpx2.AsyncClient(transport=transport, timeout=timeout, follow_redirects=True)

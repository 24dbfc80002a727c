"""Fake provider servers on 127.0.0.1 and backends pointed at them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from massgen_cli.backends.anthropic_messages import AnthropicBackend
from massgen_cli.backends.openai_chat import OpenAIChatBackend
from massgen_cli.config.backend import BackendConfig
from tests.servers.fake_gemini import FakeGeminiServer
from tests.servers.fake_providers import FakeProviderServer

TEST_KEY = "sk-test-key"


@pytest.fixture
def fake_server() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


@pytest.fixture
async def make_openai(fake_server: FakeProviderServer) -> AsyncIterator[Callable[..., OpenAIChatBackend]]:
    """Builds OpenAI-protocol backends aimed at the fake server; config fields can be overridden."""
    backends: list[OpenAIChatBackend] = []

    def make(api_key: str | None = TEST_KEY, **overrides: Any) -> OpenAIChatBackend:
        fields = {"type": "chatcompletion", "model": "fake-model", "base_url": f"{fake_server.root_url}/v1"}
        config = BackendConfig(**{**fields, "request_timeout_seconds": 5.0, **overrides})
        backend = OpenAIChatBackend(config, api_key=api_key, base_url=config.base_url)
        backends.append(backend)
        return backend

    yield make
    for backend in backends:
        await backend.aclose()


@pytest.fixture
async def make_anthropic(fake_server: FakeProviderServer) -> AsyncIterator[Callable[..., AnthropicBackend]]:
    """Builds Anthropic backends aimed at the fake server; config fields can be overridden."""
    backends: list[AnthropicBackend] = []

    def make(api_key: str | None = TEST_KEY, **overrides: Any) -> AnthropicBackend:
        fields = {"type": "claude", "model": "claude-fake", "base_url": fake_server.root_url}
        config = BackendConfig(**{**fields, "request_timeout_seconds": 5.0, **overrides})
        backend = AnthropicBackend(config, api_key=api_key)
        backends.append(backend)
        return backend

    yield make
    for backend in backends:
        await backend.aclose()


@pytest.fixture
def gemini_server() -> Iterator[FakeGeminiServer]:
    server = FakeGeminiServer().start()
    yield server
    server.stop()


@pytest.fixture
async def make_gemini(gemini_server: FakeGeminiServer) -> AsyncIterator[Callable[..., Any]]:
    """Builds Gemini backends (Gemini's own API, through the real SDK) aimed at the fake Gemini server;
    config fields can be overridden."""
    from massgen_cli.backends.gemini_generate import GeminiBackend

    backends: list[GeminiBackend] = []

    def make(api_key: str | None = TEST_KEY, **overrides: Any) -> GeminiBackend:
        fields = {"type": "gemini", "model": "gemini-2.5-flash", "request_timeout_seconds": 5.0}
        config = BackendConfig(**{**fields, **overrides})
        backend = GeminiBackend(config, api_key=api_key, base_url=gemini_server.root_url)
        backends.append(backend)
        return backend

    yield make
    for backend in backends:
        await backend.aclose()

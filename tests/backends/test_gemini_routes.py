"""Which API a ``gemini`` backend calls and with which key: Gemini's own API by default (GEMINI_API_KEY,
else GOOGLE_API_KEY; GEMINI_BASE_URL moves it), its OpenAI-compatible API when the config asks for it,
and Google's SDK loaded only when a gemini agent is built."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from massgen_cli.backends.base import Request
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import GEMINI_OPENAI_URL
from massgen_cli.errors import ConfigError, MissingAPIKeyError
from tests.servers.fake_gemini import gemini_stream
from tests.servers.fake_providers import collect

QUESTION = Request([{"role": "user", "content": "Capital of France?"}])


def test_without_a_key_the_error_names_both_variables():
    with pytest.raises(MissingAPIKeyError) as raised:
        create_backend(BackendConfig(type="gemini", model="gemini-2.5-flash"))
    assert "set GEMINI_API_KEY or GOOGLE_API_KEY" in str(raised.value)


@pytest.mark.parametrize(
    ("variables", "sent"),
    [
        ({"GOOGLE_API_KEY": "google-key-0001"}, "google-key-0001"),
        ({"GEMINI_API_KEY": "gemini-key-0002", "GOOGLE_API_KEY": "google-key-0001"}, "gemini-key-0002"),
    ],
)
async def test_the_key_comes_from_gemini_api_key_else_google_api_key(
    monkeypatch, gemini_server, variables, sent
):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GEMINI_BASE_URL", gemini_server.root_url)
    gemini_server.script(gemini_stream("Paris."))
    backend = create_backend(BackendConfig(type="gemini", model="gemini-2.5-flash"))
    try:
        await collect(backend, QUESTION)
    finally:
        await backend.aclose()
    assert gemini_server.requests[0].headers["x-goog-api-key"] == sent


@pytest.mark.parametrize(
    ("fields", "address"),
    [
        ({"base_url": "https://generativelanguage.googleapis.com/v1beta/openai/"}, None),
        ({"base_url": "http://127.0.0.1:9/proxy/openai"}, None),
        ({"api": "chat_completions"}, GEMINI_OPENAI_URL),
    ],
)
def test_the_openai_compatible_api_is_called_only_when_asked_for(monkeypatch, fields, address):
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key-0002")
    config = BackendConfig(type="gemini", model="gemini-2.5-flash", **fields)
    assert config.protocol == "openai" and BackendConfig(type="gemini", model="m").protocol == "gemini"
    backend = create_backend(config)
    assert type(backend.inner).__name__ == "OpenAIChatBackend"
    assert str(backend.inner._client.base_url).rstrip("/") == (address or fields["base_url"]).rstrip("/")


def test_gemini_base_url_naming_the_compatible_api_is_refused_with_the_way_out(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key-0002")
    monkeypatch.setenv("GEMINI_BASE_URL", GEMINI_OPENAI_URL)
    with pytest.raises(ConfigError) as raised:
        create_backend(BackendConfig(type="gemini", model="gemini-2.5-flash"))
    assert "OpenAI-compatible API" in str(raised.value) and "'base_url'" in str(raised.value)


def test_gemini_has_no_responses_api():
    with pytest.raises(ValidationError) as raised:
        BackendConfig(type="gemini", model="gemini-2.5-flash", api="responses")
    assert "gemini has no Responses API" in str(raised.value)


LOADED = """
import sys
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
backend = create_backend(BackendConfig(type="{kind}", model="{model}", api_key="key-0000-0000"))
print("google.genai" in sys.modules)
"""


@pytest.mark.parametrize(
    ("kind", "model", "loaded"),
    [("claude", "claude-sonnet-4-5", "False"), ("gemini", "gemini-2.5-flash", "True")],
)
def test_googles_sdk_loads_only_for_a_gemini_agent(kind, model, loaded):
    code = LOADED.format(kind=kind, model=model)
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert shown.stdout.strip() == loaded

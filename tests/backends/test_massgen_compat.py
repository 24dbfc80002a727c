"""MassGen configs that used to fail to load: azure_openai through the SDK's Azure client, Anthropic
beta headers, the older ui names, and upload_files (loaded with a warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from massgen_cli.backends.base import Request, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.config import load_config
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import ConfigError, MissingAPIKeyError
from tests.conftest import write_config
from tests.servers.fake_providers import anthropic_stream, openai_stream

ASK = Request([{"role": "user", "content": "Hi"}])


async def test_azure_openai_calls_the_deployment_with_key_and_api_version(fake_server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake_server.root_url + "/")
    fake_server.script(openai_stream("Hello from Azure."))
    backend = create_backend(BackendConfig(type="azure_openai", model="gpt-4.1", max_retries=0))
    try:
        assert (await complete(backend, ASK)).text == "Hello from Azure."
    finally:
        await backend.aclose()
    (sent,) = fake_server.requests
    assert sent.path == "/openai/deployments/gpt-4.1/chat/completions?api-version=2024-12-01-preview"
    assert sent.headers["api-key"] == "azure-test-key"


async def test_azure_deployment_name_and_api_version_keys(fake_server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    fake_server.script(openai_stream("ok"))
    config = BackendConfig(
        type="azure_openai",
        model="gpt-4.1",
        deployment_name="prod-gpt",
        api_version="2025-01-01",
        base_url=fake_server.root_url,
        max_retries=0,
    )
    backend = create_backend(config)
    try:
        await complete(backend, ASK)
    finally:
        await backend.aclose()
    assert (
        fake_server.requests[0].path == "/openai/deployments/prod-gpt/chat/completions?api-version=2025-01-01"
    )


def test_azure_without_key_or_endpoint_says_what_to_set(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(MissingAPIKeyError, match="set AZURE_OPENAI_API_KEY"):
        create_backend(BackendConfig(type="azure_openai", model="gpt-4.1"))
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    with pytest.raises(ConfigError, match="set AZURE_OPENAI_ENDPOINT"):
        create_backend(BackendConfig(type="azure_openai", model="gpt-4.1"))


async def test_anthropic_betas_go_out_as_the_beta_header(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("ok"))
    await complete(make_anthropic(betas=["computer-use-2025-01-24", "files-api-2025-04-14"]), ASK)
    assert fake_server.requests[0].headers["anthropic-beta"] == "computer-use-2025-01-24,files-api-2025-04-14"


def test_older_ui_names_load_and_upload_files_are_kept(tmp_path: Path):
    older = write_config(
        tmp_path,
        """
        agent:
          backend:
            type: scripted
            responses: [hi]
            upload_files:
              - image_path: picture.jpg
        display:
          type: simple
          logging_enabled: false
        """,
    )
    loaded = load_config(older)
    assert loaded.config.ui.display_type == "simple" and loaded.config.ui.logging_enabled is False
    assert loaded.warnings == []  # the file is read at start, not when the config loads
    assert loaded.config.agents[0].backend.upload_files[0].image_path == "picture.jpg"
    typed = write_config(
        tmp_path, "agent: {backend: {type: scripted, responses: [hi]}}\nui: {type: silent}\n"
    )
    assert load_config(typed).config.ui.display_type == "silent"

"""Building a backend from its config; each provider's SDK is imported only when it is used."""

from __future__ import annotations

import os

from massgen_cli.backends.base import Backend
from massgen_cli.backends.retry import RetryingBackend, RetryListener
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import PROVIDERS
from massgen_cli.errors import MissingAPIKeyError


def create_backend(config: BackendConfig, *, on_retry: RetryListener | None = None) -> Backend:
    """The backend a config describes, wrapped in bounded retries."""
    protocol = PROVIDERS[config.type or ""].protocol
    inner: Backend
    if protocol == "scripted":
        from massgen_cli.backends.scripted import ScriptedBackend

        inner = ScriptedBackend(config)
    elif protocol == "openai" and config.api_mode == "responses":
        from massgen_cli.backends.openai_responses import OpenAIResponsesBackend

        inner = OpenAIResponsesBackend(
            config, api_key=resolve_api_key(config), base_url=resolve_base_url(config)
        )
    elif protocol == "openai":
        from massgen_cli.backends.openai_chat import OpenAIChatBackend

        inner = OpenAIChatBackend(
            config,
            api_key=resolve_api_key(config),
            base_url=resolve_base_url(config),
            one_request_per_connection=config.type == "llamacpp",
        )
    elif protocol == "anthropic":
        from massgen_cli.backends.anthropic_messages import AnthropicBackend

        inner = AnthropicBackend(config, api_key=resolve_api_key(config), base_url=resolve_base_url(config))
    else:
        from massgen_cli.backends.local import LocalBackend

        inner = LocalBackend(config)
    return RetryingBackend(
        inner, max_retries=config.max_retries, base_delay=config.retry_base_delay_seconds, on_retry=on_retry
    )


def resolve_api_key(config: BackendConfig) -> str | None:
    """The configured key, else the provider's variable; a provider that needs one and has none raises."""
    provider = PROVIDERS[config.type or ""]
    key = config.api_key or (os.environ.get(provider.api_key_env) if provider.api_key_env else None)
    if key or not provider.needs_key or (config.base_url and not _is_default_server(config)):
        return key
    raise MissingAPIKeyError(
        f"no API key for backend '{config.type}': set {provider.api_key_env} "
        f"(in the environment or .env) or 'backend.api_key' in the config",
        provider=config.type or "",
    )


def resolve_base_url(config: BackendConfig) -> str | None:
    """The configured server, else the type's variable (``OPENAI_BASE_URL`` as the OpenAI SDK reads it,
    ``XAI_BASE_URL``, ``GEMINI_BASE_URL``…: a proxy in front of the provider, speaking its API), else the
    type's own address."""
    provider = PROVIDERS[config.type or ""]
    if config.base_url:
        return config.base_url
    if provider.base_url_env and os.environ.get(provider.base_url_env):
        return os.environ[provider.base_url_env]
    return provider.base_url


def _is_default_server(config: BackendConfig) -> bool:
    return config.base_url == PROVIDERS[config.type or ""].base_url

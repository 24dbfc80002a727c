"""Building a backend from its config; each provider's SDK is imported only when it is used."""

from __future__ import annotations

import os

from massgen_cli.backends.base import Backend
from massgen_cli.backends.retry import RetryingBackend, RetryListener
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import GEMINI_OPENAI_URL, PROVIDERS, calls_gemini_openai_api
from massgen_cli.errors import ConfigError, MissingAPIKeyError


def create_backend(config: BackendConfig, *, on_retry: RetryListener | None = None) -> Backend:
    """The backend a config describes, wrapped in bounded retries."""
    protocol = config.protocol
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
    elif protocol == "gemini":
        from massgen_cli.backends.gemini_generate import GeminiBackend

        inner = GeminiBackend(config, api_key=resolve_api_key(config), base_url=resolve_base_url(config))
    else:
        from massgen_cli.backends.local import LocalBackend

        inner = LocalBackend(config)
    return RetryingBackend(
        inner, max_retries=config.max_retries, base_delay=config.retry_base_delay_seconds, on_retry=on_retry
    )


def resolve_api_key(config: BackendConfig) -> str | None:
    """The configured key, else the provider's variable; a provider that needs one and has none raises."""
    provider = PROVIDERS[config.type or ""]
    variables = provider.key_variables
    key = config.api_key or next(filter(None, map(os.environ.get, variables)), None)
    if key or not provider.needs_key or (config.base_url and not _is_default_server(config)):
        return key
    raise MissingAPIKeyError(
        f"no API key for backend '{config.type}': set {' or '.join(variables)} "
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
    if config.type == "gemini" and config.protocol == "openai":
        return GEMINI_OPENAI_URL  # asked for with api: chat_completions; GEMINI_BASE_URL is Gemini's own API
    if provider.base_url_env and os.environ.get(provider.base_url_env):
        return _checked_address(config, provider.base_url_env)
    return provider.base_url


def _checked_address(config: BackendConfig, variable: str) -> str:
    """The address ``variable`` holds; for Gemini's own API, not the address of its OpenAI-compatible one
    (which this variable named before ``gemini`` called Gemini's own API)."""
    address = os.environ[variable]
    if config.type == "gemini" and calls_gemini_openai_api(address, None):
        raise ConfigError(
            f"{variable} ({address}) is the address of Gemini's OpenAI-compatible API, but a gemini backend "
            "calls Gemini's own API: set it to that API's address (without /v1beta/openai), or set "
            "'base_url' to this address in the config to call the OpenAI-compatible API"
        )
    return address


def _is_default_server(config: BackendConfig) -> bool:
    return config.base_url == PROVIDERS[config.type or ""].base_url

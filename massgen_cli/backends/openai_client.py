"""What both OpenAI APIs share here: the SDK client (OpenAI's, or Azure's for ``azure_openai``) and the
translation of the SDK's errors into ours (retryable or not, context too long, a key to check)."""

from __future__ import annotations

import os

import openai

from massgen_cli.backends.bounded_http import bounded_client
from massgen_cli.backends.pricing import library_warmer
from massgen_cli.backends.provider_errors import clip, connection_error, retry_after_seconds, timeout_error
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import AZURE_DEFAULT_API_VERSION, PROVIDERS
from massgen_cli.errors import BackendError, ConfigError, ContextLengthError, RateLimitError, ServerError

CONTEXT_ERROR_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
CONTEXT_ERROR_PHRASES = ("context length", "context window", "context size", "maximum context")


AZURE_RESPONSES_API_VERSION = "2025-04-01-preview"
"""The first Azure API version with the Responses API."""


def openai_client(
    config: BackendConfig, api_key: str, base_url: str | None, headers: dict[str, str] | None = None
) -> openai.AsyncOpenAI:
    """The SDK client: Azure's for ``azure_openai`` (endpoint, API version, deployment), else plain."""
    if config.type != "azure_openai":
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=config.request_timeout_seconds,
            max_retries=0,
            default_headers=headers,
            http_client=bounded_client(
                config.type or "openai", config.request_timeout_seconds, library_warmer(config)
            ),
        )
    endpoint = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise ConfigError(
            "backend 'azure_openai' needs its endpoint: set AZURE_OPENAI_ENDPOINT (in the environment or "
            ".env) or 'backend.base_url' (https://NAME.openai.azure.com)"
        )
    return openai.AsyncAzureOpenAI(
        api_key=api_key,
        azure_endpoint=endpoint.rstrip("/"),
        api_version=config.api_version
        or os.environ.get("AZURE_OPENAI_API_VERSION")
        or (AZURE_RESPONSES_API_VERSION if config.api_mode == "responses" else AZURE_DEFAULT_API_VERSION),
        azure_deployment=config.deployment_name or config.model,
        timeout=config.request_timeout_seconds,
        max_retries=0,
        http_client=bounded_client(config.type, config.request_timeout_seconds, library_warmer(config)),
    )


class OpenAIErrors:
    """Turns the SDK's errors for one backend (``provider``, ``model``) into ours."""

    def __init__(self, provider: str, model: str, config: BackendConfig, client: openai.AsyncOpenAI):
        self.name, self.model, self._config, self._client = provider, model, config, client

    def translate(self, error: openai.APIError, opened: bool) -> BackendError:
        """Ours for ``error``; ``opened``: the stream had begun (a lost link is then no refusal)."""
        provider = self.name
        if isinstance(error, openai.APITimeoutError):
            return timeout_error(provider, self._config.request_timeout_seconds)
        if isinstance(error, openai.APIConnectionError):
            return connection_error(provider, self._client.base_url, opened)
        if isinstance(error, openai.APIStatusError):
            return self._status_error(error)
        detail = error_text(error)
        if is_context_error(error, detail):
            return ContextLengthError(
                f"the request is too long for {self.model}: {detail}", provider=provider
            )
        return BackendError(f"{provider} failed during the stream: {detail}", provider=provider)

    def _status_error(self, error: openai.APIStatusError) -> BackendError:
        provider, status, detail = self.name, error.status_code, error_text(error)
        if status == 429:
            retry_after = retry_after_seconds(error.response.headers)
            return RateLimitError(
                f"{provider} is rate limiting (HTTP 429): {detail}",
                provider=provider,
                retry_after=retry_after,
            )
        if status >= 500:
            return ServerError(
                f"{provider} server error (HTTP {status}): {detail}", provider=provider, status=status
            )
        if status == 401:
            return BackendError(
                f"{provider} rejected the API key (HTTP 401); check {key_hint(provider)}",
                provider=provider,
                status=status,
            )
        if status in (400, 413) and is_context_error(error, detail):
            return ContextLengthError(
                f"the request is too long for {self.model} (HTTP {status}): {detail}",
                provider=provider,
                status=status,
            )
        return BackendError(f"{provider} returned HTTP {status}: {detail}", provider=provider, status=status)


def key_hint(provider: str) -> str:
    variable = PROVIDERS[provider].api_key_env if provider in PROVIDERS else None
    return f"{variable} or 'backend.api_key'" if variable else "'backend.api_key' in the config"


def error_text(error: openai.APIError) -> str:
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    return clip(str(message or error.message))


def is_context_error(error: openai.APIError, detail: str) -> bool:
    body = error.body if isinstance(error.body, dict) else {}
    labels = {str(body.get("code")), str(body.get("type"))}
    return bool(labels & CONTEXT_ERROR_CODES) or any(
        phrase in detail.lower() for phrase in CONTEXT_ERROR_PHRASES
    )

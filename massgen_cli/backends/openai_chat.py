"""The Chat Completions backend: OpenAI and every OpenAI-compatible server (vLLM, llama.cpp, Ollama…)."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

import openai
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

from massgen_cli.backends.base import Capabilities, Request, ToolSpec
from massgen_cli.backends.wire import (
    clip,
    connection_error,
    decode_tool_arguments,
    retry_after_seconds,
    timeout_error,
)
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import AZURE_DEFAULT_API_VERSION, PROVIDERS
from massgen_cli.errors import (
    BackendError,
    ConfigError,
    ConnectionFailedError,
    ContextLengthError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCall, Usage

# Keyless local servers ignore the key, but the SDK refuses to start without one.
KEYLESS_PLACEHOLDER = "not-needed"
CONTEXT_ERROR_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
CONTEXT_ERROR_PHRASES = ("context length", "context window", "context size", "maximum context")


class OpenAIChatBackend:
    """Streams Chat Completions through the ``openai`` SDK; the SDK's own retries are off."""

    capabilities = Capabilities(tool_calls=True, json_schema=True, reasoning=True)

    def __init__(
        self,
        config: BackendConfig,
        *,
        api_key: str | None,
        base_url: str | None,
        one_request_per_connection: bool = False,
    ):
        """``one_request_per_connection`` is for llama.cpp's server, which closes a connection after a
        streamed response while announcing keep-alive (a reused connection would fail)."""
        self.name = config.type or "openai"
        if not config.model:
            raise ConfigError(f"backend '{self.name}' needs 'model': the model name its server expects")
        self.model = config.model
        self._config = config
        headers = {"Connection": "close"} if one_request_per_connection else None
        self._client = _client(config, api_key or KEYLESS_PLACEHOLDER, base_url, headers)

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Send one request and yield its text, reasoning, tool calls, usage and finish."""
        opened = False
        try:
            async with await self._client.chat.completions.create(**self._params(request)) as chunks:
                opened = True
                async for event in self._events(chunks):
                    yield event
        except openai.APIError as error:
            raise self._translate(error, opened) from error

    async def aclose(self) -> None:
        await self._client.close()

    def _params(self, request: Request) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [_function_tool(tool) for tool in request.tools]
        elif request.response_schema is not None:
            schema = {"name": "decision", "schema": request.response_schema}
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        params.update(self._sampling())
        extra_body = _present(self._config, "top_k", "repetition_penalty", "chat_template_kwargs")
        extra_body.update(self._config.extra_body)
        if extra_body:
            params["extra_body"] = extra_body
        return params

    def _sampling(self) -> dict[str, Any]:
        sampling = _present(self._config, "temperature", "top_p", "max_tokens")
        # OpenAI's reasoning models reject max_tokens; compatible servers may not know the newer name.
        if self.name == "openai" and "max_tokens" in sampling:
            sampling["max_completion_tokens"] = sampling.pop("max_tokens")
        return sampling

    async def _events(self, chunks: AsyncIterator[ChatCompletionChunk]) -> AsyncIterator[StreamEvent]:
        calls = _ToolCallParts(self.name)
        finish_reason: str | None = None
        usage: Usage | None = None
        async for chunk in chunks:
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            for choice in chunk.choices[:1]:
                for event in _delta_events(choice.delta):
                    yield event
                calls.add(choice.delta.tool_calls or ())
                finish_reason = choice.finish_reason or finish_reason
        if finish_reason is None:
            raise ConnectionFailedError(
                f"the stream from {self.name} ended before the response was complete", provider=self.name
            )
        tool_calls = calls.complete()
        for call in tool_calls:
            yield call
        if usage is not None:
            yield usage
        # Some compatible servers report "stop" even when the turn ends in tool calls.
        yield Finish("tool_calls" if tool_calls and finish_reason == "stop" else finish_reason)

    def _translate(self, error: openai.APIError, opened: bool) -> BackendError:
        provider = self.name
        if isinstance(error, openai.APITimeoutError):
            return timeout_error(provider, self._config.request_timeout_seconds)
        if isinstance(error, openai.APIConnectionError):
            return connection_error(provider, self._client.base_url, opened)
        if isinstance(error, openai.APIStatusError):
            return self._status_error(error)
        detail = _error_text(error)
        if _is_context_error(error, detail):
            return ContextLengthError(
                f"the request is too long for {self.model}: {detail}", provider=provider
            )
        return BackendError(f"{provider} failed during the stream: {detail}", provider=provider)

    def _status_error(self, error: openai.APIStatusError) -> BackendError:
        provider, status, detail = self.name, error.status_code, _error_text(error)
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
                f"{provider} rejected the API key (HTTP 401); check {_key_hint(provider)}",
                provider=provider,
                status=status,
            )
        if status in (400, 413) and _is_context_error(error, detail):
            return ContextLengthError(
                f"the request is too long for {self.model} (HTTP {status}): {detail}",
                provider=provider,
                status=status,
            )
        return BackendError(f"{provider} returned HTTP {status}: {detail}", provider=provider, status=status)


class _ToolCallParts:
    """Collects streamed tool-call fragments by index and decodes each call's arguments at the end."""

    def __init__(self, provider: str):
        self.provider = provider
        self.parts: dict[int, dict[str, str]] = {}

    def add(self, fragments: Iterable[ChoiceDeltaToolCall]) -> None:
        for fragment in fragments:
            part = self.parts.setdefault(self._slot(fragment), {"id": "", "name": "", "arguments": ""})
            part["id"] = fragment.id or part["id"]
            if fragment.function is not None:
                part["name"] = fragment.function.name or part["name"]
                part["arguments"] += fragment.function.arguments or ""

    def complete(self) -> list[ToolCall]:
        return [
            ToolCall(id=part["id"] or f"call_{index}", name=part["name"], arguments=self._decode(part))
            for index, part in sorted(self.parts.items())
        ]

    def _slot(self, fragment: ChoiceDeltaToolCall) -> int:
        # Some servers leave out ``index``: a fragment with an id starts a call, one without continues it.
        if fragment.index is not None:
            return fragment.index
        if fragment.id or not self.parts:
            return len(self.parts)
        return max(self.parts)

    def _decode(self, part: dict[str, str]) -> dict[str, Any]:
        return decode_tool_arguments(self.provider, part["name"], part["arguments"])


def _delta_events(delta: ChoiceDelta) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    # Not in the OpenAI schema: DeepSeek and llama.cpp send reasoning_content, vLLM and OpenRouter reasoning.
    reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
    if isinstance(reasoning, str) and reasoning:
        events.append(ReasoningDelta(reasoning))
    if delta.content:
        events.append(TextDelta(delta.content))
    return events


def _client(
    config: BackendConfig, api_key: str, base_url: str | None, headers: dict[str, str] | None
) -> openai.AsyncOpenAI:
    """The SDK client: Azure's for ``azure_openai`` (endpoint, API version, deployment), else plain."""
    if config.type != "azure_openai":
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=config.request_timeout_seconds,
            max_retries=0,
            default_headers=headers,
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
        or AZURE_DEFAULT_API_VERSION,
        azure_deployment=config.deployment_name or config.model,
        timeout=config.request_timeout_seconds,
        max_retries=0,
    )


def _function_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _present(config: BackendConfig, *names: str) -> dict[str, Any]:
    return {name: getattr(config, name) for name in names if getattr(config, name) is not None}


def _key_hint(provider: str) -> str:
    variable = PROVIDERS[provider].api_key_env if provider in PROVIDERS else None
    return f"{variable} or 'backend.api_key'" if variable else "'backend.api_key' in the config"


def _error_text(error: openai.APIError) -> str:
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    return clip(str(message or error.message))


def _is_context_error(error: openai.APIError, detail: str) -> bool:
    body = error.body if isinstance(error.body, dict) else {}
    labels = {str(body.get("code")), str(body.get("type"))}
    return bool(labels & CONTEXT_ERROR_CODES) or any(
        phrase in detail.lower() for phrase in CONTEXT_ERROR_PHRASES
    )


def _usage(reported: Any) -> Usage:
    """The stream's usage, with the prompt-cache reads and reasoning tokens when the server reports them."""
    prompt_details = getattr(reported, "prompt_tokens_details", None)
    completion_details = getattr(reported, "completion_tokens_details", None)
    return Usage(
        reported.prompt_tokens or 0,
        reported.completion_tokens or 0,
        cached_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )

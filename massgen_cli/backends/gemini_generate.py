"""Gemini's own API (``streamGenerateContent``) through Google's ``google-genai`` SDK: what MassGen's
``type: gemini`` speaks. Function calling for our tools, thought summaries streamed as reasoning, and
Gemini's own tools as MassGen turns them on: Google Search grounding (``enable_web_search``) and code
execution (``enable_code_execution``), reported as server tool uses.

Gemini 3 models take Gemini's own tools beside function declarations (the request says so with
``include_server_side_tool_invocations``). Earlier models refuse that mix, so with Gemini's tools on they
decide through a JSON answer instead of function calls, as MassGen's gemini backend does; their tools
stay on in every request."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from massgen_cli.backends.base import Capabilities, Request, named_model
from massgen_cli.backends.bounded_http import bounded_client, shared_ssl_context
from massgen_cli.backends.gemini_contents import function_declaration, schema_instruction, to_gemini_contents
from massgen_cli.backends.gemini_stream import GeminiAssembly
from massgen_cli.backends.pricing import library_warmer
from massgen_cli.backends.provider_errors import clip, connection_error, retry_after_seconds, timeout_error
from massgen_cli.backends.stream_failures import MalformedResponseError
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import GEMINI_API_URL, attachment_kinds
from massgen_cli.errors import BackendError, ContextLengthError, RateLimitError, ServerError
from massgen_cli.events import StreamEvent

KEYLESS_PLACEHOLDER = "not-needed"
SEPARATE_TOOL_MODELS = re.compile(r"(^|/)gemini-(1|2)([.-]|$)", re.IGNORECASE)
"""Models that refuse Gemini's own tools beside function declarations ("Tool use with function calling
is unsupported by the model")."""
THINKING_MODELS = re.compile(r"gemini-(2\.5|[3-9])|gemini-exp|thinking", re.IGNORECASE)
"""Models whose thought summaries MassGen asks for by default (``include_thoughts``)."""
CONTEXT_ERROR_PHRASES = ("exceeds the maximum number of tokens", "input token count", "context window")
KEY_ERROR_PHRASES = ("api key not valid", "api_key_invalid", "api key expired")
MIXED_TOOLS_PHRASE = "function calling is unsupported"


class GeminiBackend:
    """Streams ``generateContent`` through the SDK; the SDK's own retries are off (ours retry)."""

    def __init__(self, config: BackendConfig, *, api_key: str | None, base_url: str | None):
        self.name, self.model = named_model(config, "gemini", ", for example gemini-2.5-flash")
        self._config = config
        self._own_tools = own_tools(config)
        separate = bool(self._own_tools) and SEPARATE_TOOL_MODELS.search(self.model) is not None
        kinds = attachment_kinds(config.type, config.model)
        self.capabilities = Capabilities(tool_calls=not separate, reasoning=True, attachments=kinds)
        self._http = bounded_client(self.name, config.request_timeout_seconds, library_warmer(config))
        self._unused_sync_http = httpx2.Client(verify=shared_ssl_context())  # the SDK makes one otherwise
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(config.request_timeout_seconds * 1000),
            httpx_async_client=self._http,
            httpx_client=self._unused_sync_http,
            extra_body=dict(config.extra_body) or None,
        )
        self._address = base_url or GEMINI_API_URL
        self._client = genai.Client(
            api_key=api_key or KEYLESS_PLACEHOLDER, vertexai=False, http_options=options
        )
        self._models = self._client.aio.models  # built at start-up, not inside the first step

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Send one request and yield its text, thoughts, tool calls, server tool uses, usage, finish."""
        assembly = GeminiAssembly(self.name)
        contents, config = self._params(request)
        try:
            chunks = await self._models.generate_content_stream(
                model=self.model, contents=contents, config=config
            )
            # an async generator, typed as an iterator: closing it releases its connection
            responses = cast(AsyncGenerator[types.GenerateContentResponse, None], chunks)
            async with contextlib.aclosing(responses) as opened:
                async for event in assembly.events(opened):
                    yield event
        except genai_errors.UnknownApiResponseError as error:
            raise MalformedResponseError(
                f"{self.name} sent {clip(str(error))}", provider=self.name
            ) from error
        except (genai_errors.APIError, httpx2.TransportError) as error:
            raise self._translate(error, assembly.received > 0) from error

    async def aclose(self) -> None:
        await self._client.aio.aclose()
        await self._http.aclose()
        self._unused_sync_http.close()

    def _params(self, request: Request) -> tuple[Any, types.GenerateContentConfig]:
        functions = [function_declaration(tool) for tool in request.tools]
        system, contents = to_gemini_contents(request.messages, tool_parts=bool(functions))
        own = self._own_tools if not (functions and SEPARATE_TOOL_MODELS.search(self.model)) else []
        params: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        tools = ([{"function_declarations": functions}] if functions else []) + own
        if tools:
            params["tools"] = tools
        if functions and own:
            params["tool_config"] = {"include_server_side_tool_invocations": True}
        if request.response_schema is not None and not functions:
            if own:  # not held to a schema beside Gemini's tools: asked in words
                system = "\n\n".join(filter(None, [system, schema_instruction(request.response_schema)]))
            else:
                params["response_mime_type"] = "application/json"
                params["response_json_schema"] = request.response_schema
        if system:
            params["system_instruction"] = system
        params.update(self._generation())
        return contents, types.GenerateContentConfig.model_validate(params)

    def _generation(self) -> dict[str, Any]:
        config = self._config
        settings = {
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": config.top_k,
            "max_output_tokens": config.max_tokens,
        }
        params: dict[str, Any] = {name: value for name, value in settings.items() if value is not None}
        if THINKING_MODELS.search(self.model):
            params["thinking_config"] = {"include_thoughts": True}
        return params

    def _translate(self, error: Exception, opened: bool) -> BackendError:
        provider = self.name
        if isinstance(error, httpx2.TimeoutException):
            return timeout_error(provider, self._config.request_timeout_seconds)
        if isinstance(error, httpx2.TransportError):
            return connection_error(provider, self._address, opened)
        assert isinstance(error, genai_errors.APIError)
        return self._status_error(error)

    def _status_error(self, error: genai_errors.APIError) -> BackendError:
        provider, code = self.name, int(error.code or 0)
        detail = clip(str(error.message or error.details or error))
        label = f"HTTP {code}" + (f" {error.status}" if error.status else "")
        if code == 429 or error.status == "RESOURCE_EXHAUSTED":
            wait = _retry_after(error)
            return RateLimitError(
                f"{provider} is rate limiting ({label}): {detail}", provider=provider, retry_after=wait
            )
        if code >= 500:
            return ServerError(f"{provider} server error ({label}): {detail}", provider=provider, status=code)
        lowered = detail.lower()
        if code in (401, 403) or any(phrase in lowered for phrase in KEY_ERROR_PHRASES):
            return BackendError(
                f"{provider} rejected the API key ({label}); check GEMINI_API_KEY (or GOOGLE_API_KEY) or "
                "'backend.api_key'",
                provider=provider,
                status=code,
            )
        if any(phrase in lowered for phrase in CONTEXT_ERROR_PHRASES):
            too_long = f"the request is too long for {self.model} ({label}): {detail}"
            return ContextLengthError(too_long, provider=provider, status=code)
        if MIXED_TOOLS_PHRASE in lowered:
            detail += (
                f" ({self.model} cannot use Google Search or code execution beside function calls; turn off "
                "enable_web_search and enable_code_execution, or use a Gemini 3 model)"
            )
        return BackendError(f"{provider} returned {label}: {detail}", provider=provider, status=code)


def own_tools(config: BackendConfig) -> list[dict[str, Any]]:
    """Gemini's own tools the config turns on, under MassGen's keys."""
    return [{"google_search": {}}] * config.enable_web_search + [
        {"code_execution": {}}
    ] * config.code_execution


def _retry_after(error: genai_errors.APIError) -> float | None:
    """The wait Gemini asks for: a Retry-After header, else the RetryInfo in the error's details
    (``"retryDelay": "13s"``)."""
    headers = getattr(error.response, "headers", None)
    waited = retry_after_seconds(headers) if headers is not None else None
    if waited is not None:
        return waited
    body = error.details if isinstance(error.details, dict) else {}
    inner = body.get("error", body)
    details = inner.get("details") if isinstance(inner, dict) else None
    for detail in details if isinstance(details, list) else ():
        delay = str(detail.get("retryDelay", "")) if isinstance(detail, dict) else ""
        if delay:
            with contextlib.suppress(ValueError):
                return float(delay.removesuffix("s"))
    return None

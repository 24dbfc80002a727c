"""The Chat Completions backend: OpenAI and every OpenAI-compatible server (vLLM, llama.cpp, Ollama…)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

import openai
import pydantic
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

from massgen_cli.backends.attachment_parts import with_chat_parts
from massgen_cli.backends.base import Capabilities, Request, ToolSpec, named_model
from massgen_cli.backends.openai_client import OpenAIErrors, openai_client
from massgen_cli.backends.provider_errors import decode_tool_arguments, translated_stream
from massgen_cli.backends.stream_failures import MalformedResponseError, stream_failure, whole_body
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import attachment_kinds, calls_openai_itself, is_openrouter
from massgen_cli.errors import ConnectionFailedError
from massgen_cli.events import Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCall, Usage
from massgen_cli.messages import for_chat_completions

# Keyless local servers ignore the key, but the SDK refuses to start without one.
KEYLESS_PLACEHOLDER = "not-needed"


class OpenAIChatBackend:
    """Streams Chat Completions through the ``openai`` SDK; the SDK's own retries are off."""

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
        self.name, self.model = named_model(config, "openai", ": the model name its server expects")
        self.capabilities = Capabilities(
            reasoning=True, attachments=attachment_kinds(config.type, config.model)
        )
        self._config = config
        headers = {"Connection": "close"} if one_request_per_connection else None
        self._client = openai_client(config, api_key or KEYLESS_PLACEHOLDER, base_url, headers)
        self._errors = OpenAIErrors(self.name, self.model, config, self._client)
        # The SDK builds a resource on first use (its modules take ~40 ms to import): here, at start-up,
        # rather than inside the first step, where every agent waits for it.
        self._completions = self._client.chat.completions

    def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Send one request and yield its text, reasoning, tool calls, usage and finish."""
        return translated_stream(
            lambda: self._completions.create(**self._params(request)),
            self._read,
            openai.APIError,
            self._errors.translate,
        )

    def _read(self, chunks: openai.AsyncStream[ChatCompletionChunk]) -> AsyncIterator[StreamEvent]:
        """The events of an event stream, or of a whole body (a server that ignored ``stream``)."""
        content_type = chunks.response.headers.get("content-type", "")
        return self._events(chunks) if "event-stream" in content_type else self._whole(chunks)

    async def aclose(self) -> None:
        await self._client.close()

    def _params(self, request: Request) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [with_chat_parts(message) for message in for_chat_completions(request.messages)],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [_function_tool(tool) for tool in request.tools]
        elif request.response_schema is not None:
            schema = {"name": "decision", "schema": request.response_schema}
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        params.update(self._sampling())
        reasoning, text = self._config.reasoning, self._config.text
        if reasoning is not None and reasoning.effort is not None:
            params["reasoning_effort"] = reasoning.effort
        if text is not None and text.verbosity is not None and self.name in ("openai", "azure_openai"):
            params["verbosity"] = text.verbosity
        extra_body = _present(self._config, "top_k", "repetition_penalty", "chat_template_kwargs")
        extra_body.update(self._config.extra_body)
        extra_body.update(openrouter_web_search(self._config, extra_body.get("plugins")))
        if extra_body:
            params["extra_body"] = extra_body
        return params

    def _sampling(self) -> dict[str, Any]:
        sampling = _present(self._config, "temperature", "top_p", "max_tokens")
        # OpenAI's reasoning models reject max_tokens; compatible servers may not know the newer name.
        if calls_openai_itself(self._config.type, self._config.base_url) and "max_tokens" in sampling:
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

    async def _whole(self, chunks: openai.AsyncStream[ChatCompletionChunk]) -> AsyncIterator[StreamEvent]:
        """The events of a server that answered a streamed request with one whole completion."""
        body = await whole_body(self.name, chunks.response)
        try:
            completion = ChatCompletion.model_validate(body)
        except pydantic.ValidationError as error:
            raise stream_failure(self.name, error) from None
        if not completion.choices:
            raise MalformedResponseError(f"{self.name} sent a completion without choices", provider=self.name)
        choice = completion.choices[0]
        message = choice.message
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            yield ReasoningDelta(reasoning)
        if message.content:
            yield TextDelta(message.content)
        calls = [
            ToolCall(
                call.id,
                call.function.name,
                decode_tool_arguments(self.name, call.function.name, call.function.arguments),
            )
            for call in message.tool_calls or ()
            if call.type == "function"
        ]
        for call in calls:
            yield call
        if completion.usage is not None:
            yield _usage(completion.usage)
        yield Finish("tool_calls" if calls and choice.finish_reason == "stop" else choice.finish_reason)


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


def _function_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def openrouter_web_search(config: BackendConfig, plugins: Any) -> dict[str, Any]:
    """OpenRouter's web search, as it documents it: the ``web`` plugin in the request's ``plugins`` (after
    any the config's extra_body names), with the engine, result count and prompt the config sets, and
    ``web_search_options`` for the context size; a web plugin the extra_body sets already is kept as is."""
    named = plugins if isinstance(plugins, list) else []
    if not (config.enable_web_search and is_openrouter(config.type, config.base_url)) or any(
        isinstance(plugin, dict) and plugin.get("id") == "web" for plugin in named
    ):
        return {}
    web = {"id": "web", **_present(config, "engine", "max_results", "search_prompt")}
    body: dict[str, Any] = {"plugins": [*named, web]}
    if config.search_context_size is not None:
        body["web_search_options"] = {"search_context_size": config.search_context_size}
    return body


def _present(config: BackendConfig, *names: str) -> dict[str, Any]:
    return {name: getattr(config, name) for name in names if getattr(config, name) is not None}


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

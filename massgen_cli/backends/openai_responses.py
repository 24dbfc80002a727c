"""The Responses API backend: what MassGen's ``type: openai`` speaks. Reasoning effort and summaries (the
summary streamed as reasoning; the encrypted reasoning kept in the agent's thread and given back in later
calls, as the API expects with ``store: false``), verbosity, function tools, and the provider's own tools:
OpenAI's ``web_search`` and ``code_interpreter``, xAI's ``web_search``, ``x_search`` and
``code_interpreter`` (their calls reported as server tool uses)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import openai

from massgen_cli.backends.attachment_parts import responses_part
from massgen_cli.backends.base import Capabilities, Request, ToolSpec, named_model
from massgen_cli.backends.openai_client import OpenAIErrors, openai_client
from massgen_cli.backends.provider_errors import clip, decode_tool_arguments, translated_stream
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import attachment_kinds
from massgen_cli.errors import (
    BackendError,
    ConnectionFailedError,
    ContextLengthError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import (
    Finish,
    ReasoningDelta,
    ReasoningState,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from massgen_cli.messages import (
    Message,
    attachments_in,
    is_attachment_part,
    one_system_message,
    text_parts,
)
from massgen_cli.text import one_line

KEYLESS_PLACEHOLDER = "not-needed"
SUMMARY_CHARS = 160
OPENAI_CODE_INTERPRETER = {"type": "code_interpreter", "container": {"type": "auto"}}


class OpenAIResponsesBackend:
    """Streams the Responses API through the ``openai`` SDK; nothing is stored on the server."""

    def __init__(self, config: BackendConfig, *, api_key: str | None, base_url: str | None):
        self.name, self.model = named_model(config, "openai", ", for example gpt-5-mini")
        self.capabilities = Capabilities(
            reasoning=True, attachments=attachment_kinds(config.type, config.model)
        )
        self._config = config
        self._client = openai_client(config, api_key or KEYLESS_PLACEHOLDER, base_url)
        self._responses = self._client.responses  # built at start-up, not inside the first step
        self._errors = OpenAIErrors(self.name, self.model, config, self._client)

    def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Send one request and yield its text, reasoning, tool calls, server tool uses, usage, finish."""
        return translated_stream(
            lambda: self._responses.create(**self._params(request)),
            _ResponseAssembly(self.name, self.model).events,
            openai.APIError,
            self._errors.translate,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _params(self, request: Request) -> dict[str, Any]:
        config = self._config
        params: dict[str, Any] = {
            "model": self.model,
            "input": to_responses_input(request.messages),
            "stream": True,
            "store": False,
        }
        tools = [_function_tool(tool) for tool in request.tools] + self._built_in_tools()
        if tools:
            params["tools"] = tools
        text = self._text(request)
        if text:
            params["text"] = text
        if config.reasoning is not None:
            params["reasoning"] = config.reasoning.model_dump(exclude_none=True)
            params["include"] = ["reasoning.encrypted_content"]
        sampling = {"temperature": config.temperature, "top_p": config.top_p}
        params.update({name: value for name, value in sampling.items() if value is not None})
        if config.max_tokens is not None:
            params["max_output_tokens"] = config.max_tokens
        if config.extra_body:
            params["extra_body"] = dict(config.extra_body)
        return params

    def _built_in_tools(self) -> list[dict[str, Any]]:
        """The provider's own tools the config asks for, as each documents them: OpenAI's web search and
        code interpreter (in a container it makes), xAI's web search, X search and code interpreter."""
        config, xai = self._config, self.name == "grok"
        tools: list[dict[str, Any]] = []
        if config.enable_web_search and self.name != "azure_openai":
            tools.append({"type": "web_search"})
        if config.enable_x_search and xai:
            tools.append({"type": "x_search"})
        if config.code_execution:
            tools.append({"type": "code_interpreter"} if xai else OPENAI_CODE_INTERPRETER)
        return tools

    def _text(self, request: Request) -> dict[str, Any]:
        text: dict[str, Any] = {}
        if request.response_schema is not None and not request.tools:
            schema = {"type": "json_schema", "name": "decision", "schema": request.response_schema}
            text["format"] = {**schema, "strict": False}
        verbosity = self._config.text.verbosity if self._config.text is not None else None
        if verbosity is not None and self.name != "grok":  # OpenAI's setting, which xAI does not take
            text["verbosity"] = verbosity
        return text


class _ResponseAssembly:
    """Turns the Responses stream's events into ours."""

    def __init__(self, provider: str, model: str):
        self.provider, self.model = provider, model
        self.calls = 0
        self.done: Finish | None = None
        self.usage: Usage | None = None

    async def events(self, raw: AsyncIterator[Any]) -> AsyncIterator[StreamEvent]:
        async for event in raw:
            for ours in self._handle(event):
                yield ours
        if self.done is None:
            raise ConnectionFailedError(
                f"the stream from {self.provider} ended before the response was complete",
                provider=self.provider,
            )
        if self.usage is not None:
            yield self.usage
        yield self.done

    def _handle(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "response.output_text.delta":
            return [TextDelta(event.delta)] if event.delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ReasoningDelta(event.delta)] if event.delta else []
        if kind == "response.output_item.done":
            return self._item(event.item)
        if kind in ("response.completed", "response.incomplete"):
            self._finish(event.response)
        elif kind == "response.failed":
            raise self._failure(getattr(event.response, "error", None))
        elif kind == "error":
            raise self._failure(event)
        return []

    def _item(self, item: Any) -> list[StreamEvent]:
        if item.type == "function_call":
            self.calls += 1
            arguments = decode_tool_arguments(self.provider, item.name, item.arguments or "")
            return [ToolCall(id=item.call_id, name=item.name, arguments=arguments)]
        if item.type == "reasoning":
            return [ReasoningState(item.model_dump(exclude_none=True))]
        if item.type in ("web_search_call", "x_search_call"):
            return [_search(item)]
        if item.type == "code_interpreter_call":
            return [_code_interpreter(item)]
        if item.type == "custom_tool_call":  # none is offered: the provider's own (xAI's X search tools)
            return [_provider_tool(item)]
        return []

    def _finish(self, response: Any) -> None:
        self.usage = _usage(getattr(response, "usage", None))
        incomplete = getattr(response, "incomplete_details", None)
        if getattr(response, "status", "") == "incomplete" or incomplete is not None:
            self.done = Finish("length")
        else:
            self.done = Finish("tool_calls" if self.calls else "stop")

    def _failure(self, error: Any) -> BackendError:
        code = str(getattr(error, "code", "") or "")
        detail = clip(str(getattr(error, "message", "") or "the response failed"))
        provider = self.provider
        if code == "rate_limit_exceeded":
            return RateLimitError(f"{provider} is rate limiting: {detail}", provider=provider)
        if code == "context_length_exceeded":
            too_long = f"the request is too long for {self.model}: {detail}"
            return ContextLengthError(too_long, provider=provider)
        if code in ("server_error", "server_is_overloaded", ""):
            what = code or "error"
            return ServerError(f"{provider} failed during the response ({what}): {detail}", provider=provider)
        return BackendError(f"{provider} failed during the response ({code}): {detail}", provider=provider)


def to_responses_input(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat-format messages as Responses input items: the system messages as one, first; messages by role;
    an assistant's reasoning records, then its text and function calls; tool results as function call
    outputs."""
    items: list[dict[str, Any]] = []
    for message in one_system_message(messages):
        text = text_parts(message.get("content"))
        if message["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"], "output": text})
            continue
        if message["role"] == "assistant":  # its reasoning records (not another API's kept with it)
            kept = message.get("reasoning_items") or ()
            items += [item for item in kept if item.get("type") == "reasoning"]
        if attachments_in(message.get("content")):
            items.append({"role": message["role"], "content": _input_parts(message["content"])})
        elif text or message["role"] != "assistant":
            items.append({"role": message["role"], "content": text})
        for call in message.get("tool_calls") or ():
            function = call["function"]
            call_item = {"type": "function_call", "call_id": call["id"], "name": function["name"]}
            items.append({**call_item, "arguments": function["arguments"]})
    return items


def _input_parts(content: Any) -> list[dict[str, Any]]:
    """A user message's text and attachments as Responses input parts, in order."""
    return [
        responses_part(part["attachment"])
        if is_attachment_part(part)
        else {"type": "input_text", "text": part.get("text", "")}
        for part in content
    ]


def _function_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": False,
    }


def _search(item: Any) -> ServerToolUse:
    action = getattr(item, "action", None)
    query = str(_field(action, "query") or "")
    ok = getattr(item, "status", "completed") == "completed"
    summary = f"searched: {query}" if query else "searched"
    return ServerToolUse(item.id, item.type.removesuffix("_call"), {"query": query}, summary, ok)


def _provider_tool(item: Any) -> ServerToolUse:
    """A tool the provider ran itself and reports as a custom tool call (xAI: x_keyword_search…)."""
    name = str(getattr(item, "name", "") or "provider_tool")
    arguments = _json_object(getattr(item, "input", ""))
    shown = arguments.get("query") or arguments.get("post_id")
    summary = one_line(f"{name}: {shown}" if shown else name, SUMMARY_CHARS)
    ok = getattr(item, "status", None) in (None, "completed")
    return ServerToolUse(str(getattr(item, "call_id", "") or item.id), name, arguments, summary, ok)


def _json_object(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"input": str(raw)}


def _field(holder: Any, name: str) -> Any:
    """A field of an SDK object, or of a mapping where the SDK did not know the item's type."""
    return holder.get(name) if isinstance(holder, dict) else getattr(holder, name, None)


def _code_interpreter(item: Any) -> ServerToolUse:
    code = str(getattr(item, "code", "") or "")
    outputs = getattr(item, "outputs", None) or ()
    logs = [str(getattr(out, "logs", "")) for out in outputs if getattr(out, "type", "") == "logs"]
    summary = one_line("\n".join(logs), SUMMARY_CHARS) if logs else "ran code"
    ok = getattr(item, "status", "completed") == "completed"
    return ServerToolUse(item.id, "code_interpreter", {"code": code}, summary, ok)


def _usage(reported: Any) -> Usage | None:
    """Tokens with the prompt-cache reads and reasoning tokens, as the Responses API reports them."""
    if reported is None:
        return None
    cached = getattr(getattr(reported, "input_tokens_details", None), "cached_tokens", None) or 0
    thought = getattr(getattr(reported, "output_tokens_details", None), "reasoning_tokens", None) or 0
    used = (reported.input_tokens or 0, reported.output_tokens or 0)
    return Usage(*used, cached_tokens=cached, reasoning_tokens=thought)

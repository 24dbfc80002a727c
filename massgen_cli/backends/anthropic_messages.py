"""The Anthropic Messages backend: OpenAI-format messages in, a stream of typed events out."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anthropic
import httpx2
from anthropic.types import RawMessageStreamEvent

from massgen_cli.backends.attachment_parts import anthropic_block
from massgen_cli.backends.base import Capabilities, Request, ToolSpec, named_model
from massgen_cli.backends.bounded_http import bounded_client
from massgen_cli.backends.pricing import library_warmer
from massgen_cli.backends.provider_errors import (
    clip,
    connection_error,
    decode_tool_arguments,
    retry_after_seconds,
    timeout_error,
    translated_stream,
)
from massgen_cli.backends.turns import alternating_turns
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import attachment_kinds
from massgen_cli.errors import (
    BackendError,
    ConnectionFailedError,
    ContextLengthError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import Finish, ReasoningDelta, ServerToolUse, StreamEvent, TextDelta, ToolCall, Usage
from massgen_cli.messages import (
    FunctionCall,
    Message,
    ToolCallPart,
    attachments_in,
    is_attachment_part,
    text_parts,
)

DEFAULT_MAX_TOKENS = 4096
# A proxy without keys still gets a key header: an explicit key also keeps the SDK from reading profiles.
KEYLESS_PLACEHOLDER = "not-needed"
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
SERVER_ERROR_TYPES = frozenset({"api_error", "overloaded_error"})
WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search"}
CODE_EXECUTION_TOOL = {"type": "code_execution_20250825", "name": "code_execution"}
CODE_EXECUTION_BETA = "code-execution-2025-08-25"
SERVER_RESULT_BLOCKS = (
    "web_search_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
)
CONTEXT_ERROR_PHRASES = ("prompt is too long", "context window", "context length")


class AnthropicBackend:
    """Streams the Messages API through the ``anthropic`` SDK; the SDK's own retries are off.

    The Messages API has no JSON-schema response format; a request that asks for one gets the
    schema as an instruction in the system prompt.
    """

    def __init__(self, config: BackendConfig, *, api_key: str | None, base_url: str | None = None):
        self.name, self.model = named_model(config, "claude", ", for example claude-sonnet-4-5")
        kinds = attachment_kinds(config.type, config.model)
        self.capabilities = Capabilities(json_schema=False, reasoning=True, attachments=kinds)
        self._config = config
        betas = [*config.betas, *([CODE_EXECUTION_BETA] if config.code_execution else [])]
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or KEYLESS_PLACEHOLDER,
            base_url=base_url or config.base_url,
            timeout=config.request_timeout_seconds,
            max_retries=0,
            default_headers={"anthropic-beta": ",".join(betas)} if betas else None,
            http_client=bounded_client("anthropic", config.request_timeout_seconds, library_warmer(config)),
        )
        self._messages = self._client.messages  # built at start-up, not inside the first step

    def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        """Send one request and yield its text, thinking, tool calls, usage and finish."""
        return translated_stream(
            lambda: self._messages.create(**self._params(request)),
            _MessageAssembly(self.name).events,
            (anthropic.APIError, httpx2.TransportError),
            self._translate,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _params(self, request: Request) -> dict[str, Any]:
        system, messages = to_anthropic_messages(request.messages, tool_blocks=bool(request.tools))
        if request.response_schema is not None and not request.tools:
            system = "\n\n".join(filter(None, [system, _schema_instruction(request.response_schema)]))
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._config.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
            "stream": True,
        }
        if system:
            params["system"] = system
        tools = [_anthropic_tool(tool) for tool in request.tools] + self._server_tools()
        if tools:
            params["tools"] = tools
        # anthropic 2.x dropped the sampling keywords from create(); the API still reads them from the body.
        sampling = {name: getattr(self._config, name) for name in ("temperature", "top_p", "top_k")}
        extra_body = {name: value for name, value in sampling.items() if value is not None}
        extra_body.update(self._config.extra_body)
        if extra_body:
            params["extra_body"] = extra_body
        return params

    def _server_tools(self) -> list[dict[str, Any]]:
        """Anthropic's own tools the config asks for: web search, code execution."""
        config = self._config
        return [WEB_SEARCH_TOOL] * config.enable_web_search + [CODE_EXECUTION_TOOL] * config.code_execution

    def _translate(self, error: Exception, opened: bool) -> BackendError:
        provider = self.name
        if isinstance(error, anthropic.APITimeoutError | httpx2.TimeoutException):
            return timeout_error(provider, self._config.request_timeout_seconds)
        if isinstance(error, anthropic.APIConnectionError | httpx2.TransportError):
            return connection_error(provider, self._client.base_url, opened)
        if isinstance(error, anthropic.APIStatusError):
            return self._status_error(error)
        return BackendError(f"{provider} failed: {clip(str(error))}", provider=provider)

    def _status_error(self, error: anthropic.APIStatusError) -> BackendError:
        provider, detail = self.name, clip(error.api_message or error.message)
        # An error event inside a stream arrives with the stream's own status, 200.
        status = error.status_code if error.status_code >= 400 else None
        if status == 429 or error.type == "rate_limit_error":
            retry_after = retry_after_seconds(error.response.headers)
            return RateLimitError(
                f"{provider} is rate limiting: {detail}", provider=provider, retry_after=retry_after
            )
        if (status or 0) >= 500 or error.type in SERVER_ERROR_TYPES:
            return ServerError(
                f"{provider} server error ({error.type or status}): {detail}",
                provider=provider,
                status=status,
            )
        if status == 401:
            return BackendError(
                f"{provider} rejected the API key (HTTP 401); check ANTHROPIC_API_KEY or 'backend.api_key'",
                provider=provider,
                status=status,
            )
        if any(phrase in detail.lower() for phrase in CONTEXT_ERROR_PHRASES):
            return ContextLengthError(
                f"the request is too long for {self.model}: {detail}", provider=provider, status=status
            )
        where = f"returned HTTP {status}" if status else f"sent an error event ({error.type})"
        return BackendError(f"{provider} {where}: {detail}", provider=provider, status=status)


class _MessageAssembly:
    """Turns raw Messages stream events into our events; tool input JSON is gathered per block."""

    def __init__(self, provider: str):
        self.provider = provider
        self.tool_blocks: dict[int, dict[str, str]] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.stop_reason: str | None = None
        self.stopped = False
        self.server_calls: dict[str, dict[str, str]] = {}

    async def events(self, raw: AsyncIterator[RawMessageStreamEvent]) -> AsyncIterator[StreamEvent]:
        async for event in raw:
            for ours in self._handle(event):
                yield ours
        if not self.stopped:
            raise ConnectionFailedError(
                f"the stream from {self.provider} ended before the message was complete",
                provider=self.provider,
            )
        yield Usage(self.input_tokens, self.output_tokens, cached_tokens=self.cached_tokens)
        reason = self.stop_reason or "stop"
        yield Finish(FINISH_REASONS.get(reason, reason))

    def _handle(self, event: RawMessageStreamEvent) -> list[StreamEvent]:
        if event.type == "message_start":
            usage = event.message.usage
            self.cached_tokens = usage.cache_read_input_tokens or 0
            written = usage.cache_creation_input_tokens or 0
            self.input_tokens = usage.input_tokens + self.cached_tokens + written
            self.output_tokens = usage.output_tokens
        elif event.type == "content_block_start":
            return self._block_start(event.index, event.content_block)
        elif event.type == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif event.type == "content_block_stop" and event.index in self.tool_blocks:
            gathered = self.tool_blocks.pop(event.index)
            if gathered["kind"] == "server":  # its result block reports it
                self.server_calls[gathered["id"]] = gathered
                return []
            return [self._tool_call(gathered)]
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.output_tokens = event.usage.output_tokens
        elif event.type == "message_stop":
            self.stopped = True
        return []

    def _block_start(self, index: int, block: Any) -> list[StreamEvent]:
        """A tool call (ours, or a server tool's) starts gathering its input; a server tool's result ends
        it."""
        if block.type in ("tool_use", "server_tool_use"):
            kind = "server" if block.type == "server_tool_use" else "tool"
            self.tool_blocks[index] = {"id": block.id, "name": block.name, "json": "", "kind": kind}
        elif block.type in SERVER_RESULT_BLOCKS:
            return [self._server_result(block)]
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        if delta.type == "text_delta" and delta.text:
            return [TextDelta(delta.text)]
        if delta.type == "thinking_delta" and delta.thinking:
            return [ReasoningDelta(delta.thinking)]
        if delta.type == "input_json_delta" and index in self.tool_blocks:
            self.tool_blocks[index]["json"] += delta.partial_json
        return []

    def _server_result(self, block: Any) -> ServerToolUse:
        """A web search's or code execution's result, reported with the call it answers."""
        call = self.server_calls.get(block.tool_use_id, {"name": block.type, "json": ""})
        arguments = decode_tool_arguments(self.provider, call["name"], call["json"]) if call["json"] else {}
        content = getattr(block, "content", None)
        failed = getattr(content, "type", "").endswith("_error")
        return ServerToolUse(block.tool_use_id, call["name"], arguments, _result_summary(content), not failed)

    def _tool_call(self, block: dict[str, str]) -> ToolCall:
        arguments = decode_tool_arguments(self.provider, block["name"], block["json"])
        return ToolCall(id=block["id"], name=block["name"], arguments=arguments)


def to_anthropic_messages(
    messages: list[Message], *, tool_blocks: bool = True
) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI-format messages as Anthropic's (system text, messages).

    System messages are joined into the system text; assistant tool calls become ``tool_use`` blocks,
    tool results ``tool_result`` blocks in a user message; consecutive same-role messages are merged,
    as the API wants user and assistant turns to alternate. The API rejects tool blocks in a request
    without tool definitions: with ``tool_blocks=False`` calls and results are written out as text.
    """
    return alternating_turns(
        messages, lambda message, names: _converted(message, tool_blocks, names), "content"
    )


def _converted(
    message: Message, tool_blocks: bool, names: dict[str, str]
) -> tuple[str, list[dict[str, Any]]]:
    text = text_parts(message.get("content"))
    if message["role"] == "tool":
        call_id = message["tool_call_id"]
        if tool_blocks:
            return "user", [{"type": "tool_result", "tool_use_id": call_id, "content": text}]
        return "user", [{"type": "text", "text": f"[result of {names.get(call_id, 'a tool')}: {text}]"}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if attachments_in(message.get("content")):
        blocks = [_block(part) for part in message.get("content") or ()]
    for call in message.get("tool_calls") or ():
        blocks.append(_tool_use(call) if tool_blocks else _tool_use_as_text(call))
    return ("assistant" if message["role"] == "assistant" else "user"), blocks


def _block(part: Any) -> dict[str, Any]:
    """A text part or an attachment as an Anthropic content block."""
    if is_attachment_part(part):
        return anthropic_block(part["attachment"])
    return {"type": "text", "text": part.get("text", "")}


def _tool_use(call: ToolCallPart) -> dict[str, Any]:
    function = call["function"]
    return {"type": "tool_use", "id": call["id"], "name": function["name"], "input": _arguments(function)}


def _tool_use_as_text(call: ToolCallPart) -> dict[str, Any]:
    function = call["function"]
    arguments = json.dumps(_arguments(function), ensure_ascii=False)
    return {"type": "text", "text": f"[called {function['name']}({arguments})]"}


def _arguments(function: FunctionCall) -> dict[str, Any]:
    arguments: Any = function.get("arguments") or {}
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def _result_summary(content: Any) -> str:
    """One line of a server tool's result: the pages a search found, or what code printed."""
    if isinstance(content, list):
        titles = [str(getattr(item, "title", "") or getattr(item, "url", "")) for item in content]
        return f"{len(titles)} result(s): " + "; ".join(titles[:3]) if titles else "no results"
    stdout = str(getattr(content, "stdout", "") or "")
    code = getattr(content, "return_code", None)
    return clip(stdout.strip().splitlines()[0] if stdout.strip() else f"exit code {code}")


def _anthropic_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Reply with one JSON object that matches this JSON schema, and nothing else:\n"
        f"{json.dumps(schema, separators=(',', ':'))}"
    )

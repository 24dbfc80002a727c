"""Real HTTP servers on 127.0.0.1 that speak the OpenAI and Anthropic wire formats.

A test scripts the replies (a queue, one reply per request) and reads back the requests the server
received, so backends are tested through the real SDKs, real HTTP and real server-sent events. Every
request is held to its API's published schema (``wire_schema``), as a strict server holds it: one that
breaks it is refused (HTTP 400) and named when the server stops, which fails the test.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from massgen_cli.backends.base import Backend, Request
from massgen_cli.events import StreamEvent
from tests.servers.wire_schema import api_of, wire_violations

ARGUMENT_FRAGMENT_CHARS = 7
# How often serve_forever checks for shutdown; the default half second would slow every teardown.
POLL_SECONDS = 0.02


@dataclass
class Reply:
    """One canned behaviour: a status and headers, then SSE frames or a JSON body.

    ``delay`` holds the whole response back (to trigger client timeouts); ``stall_after`` goes silent
    after that many frames until the server stops; ``cut_after`` drops the connection after that many
    frames, without ending the chunked body.
    """

    status: int = 200
    frames: list[str] = field(default_factory=list)
    body: dict[str, Any] | str | None = None
    """A JSON body; a string is sent as it is (to send a body that is not JSON)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stall_after: int | None = None
    cut_after: int | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server saw it; header names are lower-case."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeProviderServer:
    """A threaded HTTP server that answers each POST with the next scripted reply, or, with none left,
    with what ``responder`` makes of the request (a model that plays along). ``stands_for`` names, by
    path prefix, the provider a route stands for: ``openai`` (OpenAI's own API, which refuses parameters
    it does not publish) or ``xai`` (xAI's, with its own tools); other routes are any OpenAI-compatible
    server, or Anthropic's."""

    def __init__(
        self,
        responder: Callable[[RecordedRequest], Reply] | None = None,
        *,
        stands_for: Mapping[str, str] | None = None,
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self.stands_for = dict(stands_for or {})
        self.wire_errors: list[str] = []
        """What requests broke of their API's published schema (each refused with HTTP 400)."""
        self.stopping = threading.Event()
        self.responder = responder
        self._replies: deque[Reply] = deque()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(POLL_SECONDS,), daemon=True)

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        self._replies.extend(replies)

    def next_reply(self, request: RecordedRequest) -> Reply:
        if self._replies:
            return self._replies.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply(status=500, body={"error": {"message": "the fake server has no scripted reply left"}})

    def start(self) -> FakeProviderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; replies held back by ``delay`` or ``stall_after`` give up at once. Raises when a
        request broke its API's published schema."""
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        if self.wire_errors:
            raise AssertionError("requests off the published schema:\n" + "\n".join(self.wire_errors))

    def refusal(self, request: RecordedRequest) -> Reply | None:
        """The 400 a strict server answers a request that breaks its API's schema with, or None."""
        provider = next((p for prefix, p in self.stands_for.items() if request.path.startswith(prefix)), None)
        problems = wire_violations(request.path, request.body, stands_for=provider)
        if not problems:
            return None
        self.wire_errors += [f"{request.path}: {problem}" for problem in problems]
        message = "; ".join(problems)
        if api_of(request.path) == "anthropic":
            return anthropic_error(400, "invalid_request_error", message)
        return openai_error(400, message)


def _handler_for(server: FakeProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; with Nagle on, each response waits ~40 ms.
        disable_nagle_algorithm = True

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                # The client hung up first (a timeout test, or a kept-alive connection closed).
                self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            whole = len(raw) == length  # else the client hung up while sending (a cancelled call)
            body = json.loads(raw or b"{}") if whole else {}
            headers = {name.lower(): value for name, value in self.headers.items()}
            recorded = RecordedRequest(self.path, headers, body)
            server.requests.append(recorded)
            reply = (server.refusal(recorded) if whole else None) or server.next_reply(recorded)
            if reply.delay and server.stopping.wait(reply.delay):
                self.close_connection = True
                return
            if reply.frames:
                self._stream(reply)
            else:
                self._json(reply)

        def _json(self, reply: Reply) -> None:
            raw = reply.body if isinstance(reply.body, str) else json.dumps(reply.body or {})
            payload = raw.encode()
            self._start(reply, {"Content-Type": "application/json", "Content-Length": str(len(payload))})
            self.wfile.write(payload)

        def _stream(self, reply: Reply) -> None:
            self._start(reply, {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"})
            for index, frame in enumerate(reply.frames):
                if index == reply.stall_after:
                    server.stopping.wait()
                if index in (reply.cut_after, reply.stall_after):
                    self.close_connection = True
                    return
                self._chunk(frame.encode())
            self._chunk(b"")

        def _start(self, reply: Reply, headers: dict[str, str]) -> None:
            self.send_response(reply.status)
            for name, value in {**headers, **reply.headers}.items():
                self.send_header(name, value)
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest shows what matters."""

    return Handler


def text_pieces(text: str) -> list[str]:
    """Split text into word-sized pieces, as a model streams it."""
    return re.findall(r"\S+\s*|\s+", text)


def _fragments(text: str) -> list[str]:
    return [text[i : i + ARGUMENT_FRAGMENT_CHARS] for i in range(0, len(text), ARGUMENT_FRAGMENT_CHARS)]


# OpenAI Chat Completions


def _openai_frame(delta: dict[str, Any] | None, finish_reason: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}
    return f"data: {json.dumps({**chunk, 'choices': choices, **extra})}\n\n"


def openai_stream(
    text: str = "",
    *,
    reasoning: str = "",
    tool_calls: Sequence[tuple[str, str, str]] = (),
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = (12, 7),
    cached: int = 0,
    reasoning_tokens: int = 0,
) -> Reply:
    """A streamed chat completion; ``tool_calls`` are (id, name, raw arguments) split over chunks;
    ``cached`` and ``reasoning_tokens`` go in the usage's details, as OpenAI reports them."""
    frames = [_openai_frame({"role": "assistant", "content": ""})]
    frames += [_openai_frame({"reasoning_content": piece}) for piece in text_pieces(reasoning)]
    frames += [_openai_frame({"content": piece}) for piece in text_pieces(text)]
    for index, (call_id, name, arguments) in enumerate(tool_calls):
        opening = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        frames.append(_openai_frame({"tool_calls": [opening]}))
        frames += [
            _openai_frame({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _fragments(arguments)
        ]
    frames.append(_openai_frame({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    if usage is not None:
        counts: dict[str, Any] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        }
        if cached or reasoning_tokens:
            counts["prompt_tokens_details"] = {"cached_tokens": cached}
            counts["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        frames.append(_openai_frame(None, usage=counts))
    frames.append("data: [DONE]\n\n")
    return Reply(frames=frames)


def openai_error(
    status: int,
    message: str,
    *,
    code: str | int | None = None,
    error_type: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error response in the shape OpenAI and llama.cpp use."""
    error = {"message": message, "type": error_type, "param": None, "code": code}
    return Reply(status=status, body={"error": error}, headers=headers or {})


# Anthropic Messages


def _anthropic_frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n"


def _anthropic_block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
    frames = [_anthropic_frame("content_block_start", {"index": index, "content_block": start})]
    frames += [_anthropic_frame("content_block_delta", {"index": index, "delta": delta}) for delta in deltas]
    frames.append(_anthropic_frame("content_block_stop", {"index": index}))
    return frames


def anthropic_stream(
    text: str = "",
    *,
    thinking: str = "",
    tool_uses: Sequence[tuple[str, str, str]] = (),
    server_tools: Sequence[tuple[str, str, str, dict[str, Any]]] = (),
    stop_reason: str | None = None,
    usage: tuple[int, int] = (12, 7),
    cache_read: int = 0,
) -> Reply:
    """A streamed message; ``tool_uses`` are (id, name, raw input JSON) sent as input_json_delta pieces;
    ``server_tools`` are Anthropic's own tools it ran: (id, name, raw input JSON, result block), before
    the text."""
    message = {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": 1, "cache_read_input_tokens": cache_read},
    }  # fmt: skip
    frames = [_anthropic_frame("message_start", {"message": message}), _anthropic_frame("ping", {})]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if thinking:
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in text_pieces(thinking)]
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    for call_id, name, arguments, result in server_tools:
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _fragments(arguments)]
        blocks.append(({"type": "server_tool_use", "id": call_id, "name": name, "input": {}}, deltas))
        blocks.append(({**result, "tool_use_id": call_id}, []))
    if text:
        blocks.append(
            ({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in text_pieces(text)])
        )
    for call_id, name, arguments in tool_uses:
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _fragments(arguments)]
        blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}}, deltas))
    for index, (start, deltas) in enumerate(blocks):
        frames += _anthropic_block(index, start, deltas)
    reason = stop_reason or ("tool_use" if tool_uses else "end_turn")
    frames.append(
        _anthropic_frame(
            "message_delta",
            {"delta": {"stop_reason": reason, "stop_sequence": None}, "usage": {"output_tokens": usage[1]}},
        )
    )
    frames.append(_anthropic_frame("message_stop", {}))
    return Reply(frames=frames)


def anthropic_error(
    status: int, error_type: str, message: str, *, headers: dict[str, str] | None = None
) -> Reply:
    """An error response in Anthropic's shape."""
    body = {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_fake"}
    return Reply(status=status, body=body, headers=headers or {})


# Reading a backend's stream


async def collect(backend: Backend, request: Request) -> list[StreamEvent]:
    """Every event of one call, in order."""
    return [event async for event in backend.stream(request)]


async def collect_until_error(backend: Backend, request: Request) -> tuple[list[StreamEvent], Exception]:
    """The events a call yielded before it failed, and the error; fails the test if the call succeeded."""
    events: list[StreamEvent] = []
    try:
        async for event in backend.stream(request):
            events.append(event)
    except Exception as error:
        return events, error
    raise AssertionError(f"the call did not fail; it yielded {events}")

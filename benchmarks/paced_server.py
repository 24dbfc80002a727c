"""An OpenAI-compatible chat server on 127.0.0.1 that answers like a model with a set pace: each request
waits ``latency_s`` and then streams its reply at ``tokens_per_s`` (one token per SSE frame). It plays the
coordination game by rule: with no answer in the prompt it calls ``new_answer``; with answers, ``vote``
for agent1; without tools it answers in text.

Every request is recorded with its model (the agent), its kind, when it arrived, when it ended and
whether the client hung up first, so benchmarks can measure model time, superseded time and overheads.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

POLL_S = 0.005


@dataclass
class Served:
    model: str
    kind: str
    arrived: float
    ended: float = 0.0
    completed: bool = False


class PacedServer:
    def __init__(self, latency_s: float = 0.5, tokens_per_s: float = 100.0, tokens: int = 30):
        self.latency_s, self.tokens_per_s, self.tokens = latency_s, tokens_per_s, tokens
        self.latency_by_model: dict[str, float] = {}
        self.prompt_tokens_by_reply: dict[tuple[str, str], int] = {}
        """The input tokens a model's replies of one kind (answer, vote, text) report (100 by default)."""
        self.served: list[Served] = []
        self.lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> PacedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def first_arrival(self) -> float | None:
        with self.lock:
            return min((s.arrived for s in self.served), default=None)

    def busy_seconds(self) -> float:
        """The union of the intervals in which at least one request was being served."""
        with self.lock:
            spans = sorted((s.arrived, s.ended) for s in self.served if s.ended)
        total, start, end = 0.0, None, None
        for a, b in spans:
            if end is None or a > end:
                if end is not None and start is not None:
                    total += end - start
                start, end = a, b
            else:
                end = max(end, b)
        if start is not None and end is not None:
            total += end - start
        return total


def _reply(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None, str]:
    """(kind, tool call or None, text) for a request, by the coordination rule."""
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    last = str(body["messages"][-1].get("content") or "")
    if "new_answer" in tools and ("(no answers yet)" in last or "vote" not in tools):
        content = f"The answer from {body.get('model')} is 42."
        return "answer", {"name": "new_answer", "arguments": json.dumps({"content": content})}, ""
    if "vote" in tools:
        vote = json.dumps({"agent_id": "agent1", "reason": "right"})
        return "vote", {"name": "vote", "arguments": vote}, ""
    return "text", None, "The answer is 42."


def _frames(
    model: str, call: dict[str, Any] | None, text: str, tokens: int, prompt_tokens: int = 100
) -> list[dict[str, Any]]:
    pieces: list[dict[str, Any]] = []
    payload = call["arguments"] if call else text
    size = max(1, len(payload) // tokens + 1)
    chunks = [payload[i : i + size] for i in range(0, len(payload), size)]
    for index, chunk in enumerate(chunks):
        if call:
            function = {"arguments": chunk} | ({"name": call["name"]} if index == 0 else {})
            delta: dict[str, Any] = {"tool_calls": [{"index": 0, "function": function}]}
            if index == 0:
                delta["tool_calls"][0] |= {"id": "call_1", "type": "function"}
        else:
            delta = {"content": chunk}
        pieces.append({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    finish = "tool_calls" if call else "stop"
    pieces.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": tokens,
        "total_tokens": prompt_tokens + tokens,
    }
    pieces.append({"choices": [], "usage": usage})
    return [{"id": "paced", "object": "chat.completion.chunk", "model": model, **p} for p in pieces]


def _handler(server: PacedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):  # a client that hung up between requests
                self.close_connection = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            kind, call, text = _reply(body)
            model = str(body.get("model"))
            served = Served(model, kind, time.monotonic())
            with server.lock:
                server.served.append(served)
            try:
                self._wait(server.latency_by_model.get(model, server.latency_s))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                prompt_tokens = server.prompt_tokens_by_reply.get((model, kind), 100)
                frames = _frames(model, call, text, server.tokens, prompt_tokens)
                for frame in frames:
                    self._chunk(f"data: {json.dumps(frame)}\n\n".encode())
                    self._wait(1 / server.tokens_per_s)
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")
                served.completed = True
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            finally:
                served.ended = time.monotonic()

        def _wait(self, seconds: float) -> None:
            """Sleep, noticing within ``POLL_S`` that the client hung up (as a model server stops a
            generation whose client went away)."""
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                readable, _, _ = select.select([self.connection], [], [], min(left, POLL_S))
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    raise ConnectionResetError("the client hung up")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler

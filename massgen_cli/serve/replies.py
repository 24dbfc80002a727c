"""One request's answer, as an ASGI response that runs the turn: whole or streamed, in the shape of the
API it was asked in (a ``Speaker``: Chat Completions', the Responses API's). The reasoning (the agents'
work) and the answer (the content) come from ``trace``; an error found before the first byte is sent
gets its own status, one after it an error event in the stream. A client that goes away cancels its turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from massgen_cli.coordination.call_answers import ClientCall
from massgen_cli.coordination.outcome import TurnResult
from massgen_cli.errors import MassGenError, UsageError
from massgen_cli.events import FinalAnswer, RunEvent
from massgen_cli.redaction import redactor
from massgen_cli.serve.runs import Ended, Item, LiveRun, Opened, Runs, Steered, log
from massgen_cli.serve.trace import Said, Transcript
from massgen_cli.serve.wire import SSE_KEEPALIVE, ApiError

KEEPALIVE_S = 15.0
"""How long a stream may stay silent before a comment line keeps proxies from closing it."""
SESSION_HEADER = "x-massgen-session"


@dataclass(frozen=True)
class TurnEnd:
    """How a turn that answered ended, as a reply tells it: its result, the agents' work (the whole
    reasoning), the calls of the client's tools its answer is (None: its answer is text), and what
    MassGen adds (``massgen_metadata``)."""

    result: TurnResult
    reasoning: str
    calls: tuple[ClientCall, ...] | None
    facts: dict[str, Any]

    @property
    def answer(self) -> str:
        return self.result.final_answer or ""


class Speaker(Protocol):
    """An API's shape of a reply: the whole body, or the events of a stream (each a JSON object, framed
    by ``frame``; ``ending`` closes the stream)."""

    ending: bytes

    def whole(self, end: TurnEnd) -> dict[str, Any]: ...

    def opening(self) -> list[dict[str, Any]]: ...

    def said(self, said: Said) -> list[dict[str, Any]]: ...

    def closing(self, end: TurnEnd) -> list[dict[str, Any]]: ...

    def broken(self, error: ApiError) -> list[dict[str, Any]]: ...

    def frame(self, data: dict[str, Any]) -> bytes: ...


class TurnReply(Response):
    """Runs ``run`` under the limits of ``runs`` and answers with what it said, in ``speaker``'s shape."""

    def __init__(self, runs: Runs, run: LiveRun, speaker: Speaker):
        self.runs, self.run, self.speaker = runs, run, speaker
        self.redact = redactor()
        self.status_code = 200
        self.background = None
        self.started = self.complete = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.send = send
        gone = asyncio.create_task(_disconnected(receive))
        work = asyncio.create_task(self._answer())
        gone.add_done_callback(lambda _: self.complete or work.cancel())  # once answered, it may close
        try:
            await work
        except asyncio.CancelledError:
            if not gone.done():  # cancelled from outside (the server stops), not by the client
                raise
        finally:
            gone.cancel()

    async def _answer(self) -> None:
        heard = self.run.subscribe()
        try:
            async with self.runs.turn_for(self.run):
                running = asyncio.create_task(self.run.run(self.runs.executor))
                try:
                    await (self._stream(heard) if self.run.ask.stream else self._whole(heard))
                finally:
                    if not running.done():
                        self.run.cancel()
                    await asyncio.shield(running)  # the slot is free once the run's app is closed
        except ApiError as error:
            await self._fail(error)

    async def _whole(self, heard: asyncio.Queue[Item]) -> None:
        transcript, session = Transcript(), None
        while not isinstance(item := await heard.get(), Ended):
            if isinstance(item, Opened):
                session = item.session_id
            elif not isinstance(item, Steered):  # a message to the agents is the page's, not the reply's
                self._hear(transcript, item)
        body = self.speaker.whole(self._end(item, transcript))
        await self._send_json(200, body, {SESSION_HEADER: session or ""})

    async def _stream(self, heard: asyncio.Queue[Item]) -> None:
        first = await heard.get()
        if isinstance(first, Ended):  # it never began: its error has its own status still
            answered(first)  # raises (a run that answers opened first)
        assert isinstance(first, Opened)
        await self._start_stream(first.session_id)
        transcript = Transcript()
        while not isinstance(item := await self._next(heard), Ended):
            if not isinstance(item, Opened | Steered):
                await self._send_events(self.speaker.said(self._hear(transcript, item)))
        await self._send_events(self.speaker.closing(self._end(item, transcript)))
        await self._send_body(self.speaker.ending, more=False)

    def _hear(self, transcript: Transcript, event: RunEvent) -> Said:
        """What ``event`` says; the final answer says nothing when it is a call of the client's tools."""
        if isinstance(event, FinalAnswer) and self.run.client.calls_of(event.text) is not None:
            return Said()
        return transcript.hear(event)

    def _end(self, ended: Ended, transcript: Transcript) -> TurnEnd:
        result = answered(ended)
        calls = self.run.client.calls_of(result.final_answer or "")
        facts = run_facts(result, self.run.ask.not_applied)
        return TurnEnd(result, transcript.reasoning_text, calls, facts)

    async def _start_stream(self, session: str) -> None:
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache", SESSION_HEADER: session}
        await self.send({"type": "http.response.start", "status": 200, "headers": _raw(headers)})
        self.started = True
        await self._send_events(self.speaker.opening())

    async def _fail(self, error: ApiError) -> None:
        """The error as its status and body, or, once a stream has begun, as its last event."""
        if not self.started:
            await self._send_json(error.status, error.body(), {})
            return
        await self._send_events(self.speaker.broken(error))
        await self._send_body(self.speaker.ending, more=False)

    async def _next(self, heard: asyncio.Queue[Item]) -> Item:
        """The run's next item; a keep-alive line each ``KEEPALIVE_S`` of silence. (Not ``wait_for``: in
        Python 3.11 it swallows a cancel that comes as the item does, and a client's hang-up would be
        lost.)"""
        getting = asyncio.ensure_future(heard.get())
        try:
            while not getting.done():
                await asyncio.wait({getting}, timeout=KEEPALIVE_S)
                if not getting.done():
                    await self._send_body(SSE_KEEPALIVE)
            return getting.result()
        finally:
            getting.cancel()

    async def _send_events(self, events: list[dict[str, Any]]) -> None:
        for data in events:
            await self._send_body(self.speaker.frame(self.redact(data)))

    async def _send_json(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(self.redact(body), ensure_ascii=False).encode()
        head = {"content-type": "application/json", "content-length": str(len(data)), **headers}
        await self.send({"type": "http.response.start", "status": status, "headers": _raw(head)})
        self.started = True
        await self._send_body(data, more=False)

    async def _send_body(self, data: bytes, *, more: bool = True) -> None:
        """Part of the body; the last part (``more`` false) completes the response, after which the
        client may close the connection without cancelling what is left to do (closing the run)."""
        self.complete = not more
        with contextlib.suppress(OSError):  # the client went away: the watch on it cancels the turn
            await self.send({"type": "http.response.body", "body": data, "more_body": more})


def answered(ended: Ended) -> TurnResult:
    """The result of a turn that answered; an ``ApiError`` saying why any other did not."""
    if ended.cancelled:
        raise ApiError(503, "the turn was cancelled: the server is stopping", kind="server_error",
                       code="cancelled")  # fmt: skip
    if ended.error is not None:
        raise failure(ended.error)
    result = ended.result
    assert result is not None
    if result.final_answer is None:
        raise ApiError(500, f"no answer: {result.end_reason}", kind="server_error", code="no_answer")
    return result


def failure(error: Exception) -> ApiError:
    """A run's exception as the error its client reads: a session another run holds is a conflict; a
    failure of ours or from outside is the server's."""
    if isinstance(error, ApiError):  # the request's own fault, found as its run opened
        return error
    if isinstance(error, UsageError):
        return ApiError(409, str(error), code="session_in_use", param="session")
    if isinstance(error, MassGenError):
        return ApiError(500, str(error), kind="server_error", code="run_failed")
    log.error("a run failed", exc_info=error)
    return ApiError(500, f"internal error: {type(error).__name__}: {error}", kind="server_error")


def run_facts(result: TurnResult, not_applied: tuple[str, ...] = ()) -> dict[str, Any]:
    """What MassGen adds to a completion (``massgen_metadata``, named as MassGen's server names it, as
    are ``session_id`` and ``selected_agent``): the session and turn, the winner, the votes, why the turn
    ended, its cost, and the request's parameters left to the config's models."""
    return {
        "session_id": result.session_id,
        "turn": result.turn,
        "selected_agent": result.winner,
        "votes": [{"voter": v.voter, "target": v.target, "reason": v.reason} for v in result.votes],
        "end_reason": result.end_reason,
        "cost_usd": result.turn_usage.fields()["cost_usd"],
        "parameters_not_applied": list(not_applied),
    }


async def _disconnected(receive: Receive) -> None:
    """Returns when the client goes away (the request's body has been read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode("latin-1", "replace")) for name, value in headers.items() if value]

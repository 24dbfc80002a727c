"""A turn's reply in the Responses API's shape: one ``response`` object, or its stream of typed events
(``response.created``, ``response.in_progress``, the output items as they come: the agents' work as a
``reasoning`` item's summary, the final answer as a ``message`` item's ``output_text``, or the calls of the
client's tools as ``function_call`` items; then ``response.completed``, or ``response.failed``). Each
answered response is kept for ``previous_response_id`` unless its request said ``store: false``."""

from __future__ import annotations

import json
import time
from typing import Any

from massgen_cli.events import Usage
from massgen_cli.serve.replies import TurnEnd
from massgen_cli.serve.response_store import ResponseStore, StoredResponse
from massgen_cli.serve.responses_items import OutputItems
from massgen_cli.serve.responses_wire import ResponsesAsk
from massgen_cli.serve.tool_specs import chat_tool_calls
from massgen_cli.serve.trace import Said
from massgen_cli.serve.wire import ApiError


class ResponsesSpeaker:
    """The Responses API's reply to ``asked`` (its response id ``resp_<run id>``), kept in ``store``
    for ``owner``."""

    ending = b""

    def __init__(self, asked: ResponsesAsk, run_id: str, store: ResponseStore, owner: str | None):
        self.asked, self.store, self.owner = asked, store, owner
        self.id = f"resp_{run_id}"
        self.created = int(time.time())
        self.items = OutputItems(run_id)
        self.sequence = 0

    def whole(self, end: TurnEnd) -> dict[str, Any]:
        self.items.said(Said(reasoning=end.reasoning))
        self.items.said(Said(content="" if end.calls is not None else end.answer))
        self.items.finish(end.calls)
        self._keep(end)
        return self._response("completed", end)

    def opening(self) -> list[dict[str, Any]]:
        created = self._event("response.created", response=self._response("in_progress"))
        return [created, self._event("response.in_progress", response=self._response("in_progress"))]

    def said(self, said: Said) -> list[dict[str, Any]]:
        return [self._event(kind, **data) for kind, data in self.items.said(said)]

    def closing(self, end: TurnEnd) -> list[dict[str, Any]]:
        events = [self._event(kind, **data) for kind, data in self.items.finish(end.calls)]
        self._keep(end)
        return [*events, self._event("response.completed", response=self._response("completed", end))]

    def broken(self, error: ApiError) -> list[dict[str, Any]]:
        events = [self._event(kind, **data) for kind, data in self.items.finish(None)]
        failed = self._response("failed") | {"error": {"code": "server_error", "message": str(error)}}
        return [*events, self._event("response.failed", response=failed)]

    def frame(self, data: dict[str, Any]) -> bytes:
        return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    def _event(self, kind: str, **data: Any) -> dict[str, Any]:
        self.sequence += 1
        return {"type": kind, "sequence_number": self.sequence - 1, **data}

    def _response(self, status: str, end: TurnEnd | None = None) -> dict[str, Any]:
        echo = self.asked.echo
        response: dict[str, Any] = {
            "id": self.id, "object": "response", "created_at": self.created, "status": status,
            "model": self.asked.ask.model, "output": self.items.done, "error": None,
            "incomplete_details": None, "instructions": echo.get("instructions"),
            "metadata": echo.get("metadata", {}), "temperature": echo.get("temperature"),
            "top_p": echo.get("top_p"), "max_output_tokens": echo.get("max_output_tokens"),
            "previous_response_id": echo.get("previous_response_id"),
            "parallel_tool_calls": echo.get("parallel_tool_calls", True),
            "tool_choice": echo.get("tool_choice", "auto"), "tools": echo.get("tools", []),
            "text": {"format": {"type": "text"}}, "truncation": "disabled",
            "user": echo.get("user"), "usage": None,
        }  # fmt: skip
        if end is not None:
            response["usage"] = _usage(end.result.turn_usage)
            response["massgen_metadata"] = end.facts
            response["completed_at"] = int(time.time())
        return response

    def _keep(self, end: TurnEnd) -> None:
        """The conversation with this answer, for a request that names this response as its previous."""
        if not self.asked.store:
            return
        said: dict[str, Any] = (
            {"role": "assistant", "content": None, "tool_calls": chat_tool_calls(end.calls)}
            if end.calls is not None
            else {"role": "assistant", "content": end.answer}
        )
        stored = StoredResponse(end.result.session_id, (*self.asked.messages, said))
        self.store.keep(self.owner, self.id, stored)


def _usage(usage: Usage) -> dict[str, Any]:
    """A turn's usage as the Responses API reports it (every agent's calls, summed; cache writes are
    not counted apart)."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.tokens,
    }

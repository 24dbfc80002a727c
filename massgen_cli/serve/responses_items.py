"""The output items of one response as they are written, and the stream events that write them: the
agents' work goes into a ``reasoning`` item's summary, the answer into a ``message`` item's
``output_text``; a piece of the other kind closes the open item and opens one of its own kind, so items
follow each other as the pieces did. The calls of the client's tools end the output as ``function_call``
items. ``done`` is the output so far, as the response object lists it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from massgen_cli.coordination.call_answers import ClientCall
from massgen_cli.serve.tool_specs import function_call_item
from massgen_cli.serve.trace import Said

Event = tuple[str, dict[str, Any]]


@dataclass
class _Open:
    """The item being written: its kind, place in the output, id and text so far."""

    kind: str
    index: int
    id: str
    text: str = ""


class OutputItems:
    """The output of the response of run ``run_id``, written piece by piece."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.done: list[dict[str, Any]] = []
        self.open: _Open | None = None

    def said(self, said: Said) -> list[Event]:
        """The events that write ``said``: its reasoning, then its content."""
        events: list[Event] = []
        for kind, text in (("reasoning", said.reasoning), ("message", said.content)):
            if text:
                events += self._write(kind, text)
        return events

    def finish(self, calls: tuple[ClientCall, ...] | None) -> list[Event]:
        """Close the open item, then write each call as a ``function_call`` item."""
        events = self._close()
        for call in calls or ():
            index, item = len(self.done), function_call_item(call)
            added = {**item, "status": "in_progress", "arguments": ""}
            at = {"item_id": item["id"], "output_index": index}
            events += [
                ("response.output_item.added", {"output_index": index, "item": added}),
                ("response.function_call_arguments.delta", {**at, "delta": call.arguments}),
                (
                    "response.function_call_arguments.done",
                    {**at, "name": call.name, "arguments": call.arguments},
                ),
                ("response.output_item.done", {"output_index": index, "item": item}),
            ]
            self.done.append(item)
        return events

    def _write(self, kind: str, text: str) -> list[Event]:
        events: list[Event] = []
        if self.open is None or self.open.kind != kind:
            events += self._close()
            events += self._begin(kind)
        assert self.open is not None
        self.open.text += text
        at = {"item_id": self.open.id, "output_index": self.open.index}
        if kind == "reasoning":
            return [
                *events,
                ("response.reasoning_summary_text.delta", {**at, "summary_index": 0, "delta": text}),
            ]
        delta = {**at, "content_index": 0, "delta": text, "logprobs": []}
        return [*events, ("response.output_text.delta", delta)]

    def _begin(self, kind: str) -> list[Event]:
        index = len(self.done)
        prefix = "rs" if kind == "reasoning" else "msg"
        self.open = opened = _Open(kind, index, f"{prefix}_{self.run_id}_{index}")
        at = {"item_id": opened.id, "output_index": index}
        if kind == "reasoning":
            item = {"id": opened.id, "type": "reasoning", "summary": []}
            part = {"type": "summary_text", "text": ""}
            return [
                ("response.output_item.added", {"output_index": index, "item": item}),
                ("response.reasoning_summary_part.added", {**at, "summary_index": 0, "part": part}),
            ]
        item = {
            "id": opened.id,
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        return [
            ("response.output_item.added", {"output_index": index, "item": item}),
            ("response.content_part.added", {**at, "content_index": 0, "part": _text_part("")}),
        ]

    def _close(self) -> list[Event]:
        opened, self.open = self.open, None
        if opened is None:
            return []
        at = {"item_id": opened.id, "output_index": opened.index}
        if opened.kind == "reasoning":
            part = {"type": "summary_text", "text": opened.text}
            item: dict[str, Any] = {"id": opened.id, "type": "reasoning", "summary": [part]}
            events: list[Event] = [
                ("response.reasoning_summary_text.done", {**at, "summary_index": 0, "text": opened.text}),
                ("response.reasoning_summary_part.done", {**at, "summary_index": 0, "part": part}),
            ]
        else:
            part = _text_part(opened.text)
            item = {
                "id": opened.id,
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
            events = [
                (
                    "response.output_text.done",
                    {**at, "content_index": 0, "text": opened.text, "logprobs": []},
                ),
                ("response.content_part.done", {**at, "content_index": 0, "part": part}),
            ]
        self.done.append(item)
        return [*events, ("response.output_item.done", {"output_index": opened.index, "item": item})]


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}

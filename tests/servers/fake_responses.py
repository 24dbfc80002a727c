"""OpenAI's Responses API on the wire: streamed replies (server-sent events with the API's event types)
for ``FakeProviderServer``, read by the real ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.servers.fake_providers import Reply, text_pieces


class _Frames:
    """Numbered events of one response, as the API streams them."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.output: list[dict[str, Any]] = []

    def event(self, kind: str, **data: Any) -> None:
        payload = {"type": kind, "sequence_number": len(self.frames), **data}
        self.frames.append(f"event: {kind}\ndata: {json.dumps(payload)}\n\n")

    def item(self, item: dict[str, Any], *middle: tuple[str, dict[str, Any]]) -> None:
        """An output item: added (empty), the events ``middle``, then done (whole)."""
        index = len(self.output)
        self.event("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
        for kind, data in middle:
            self.event(kind, output_index=index, item_id=item["id"], **data)
        done = {**item, "status": "completed"}
        self.event("response.output_item.done", output_index=index, item=done)
        self.output.append(done)


def _response(status: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 0,
        "model": "gpt-fake",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **extra,
    }


def responses_stream(
    text: str = "",
    *,
    summary: str = "",
    encrypted: str = "",
    calls: Sequence[tuple[str, str, str]] = (),
    searched: str = "",
    ran: tuple[str, str] | None = None,
    provider_items: Sequence[dict[str, Any]] = (),
    usage: tuple[int, int] = (12, 7),
    cached: int = 0,
    reasoning_tokens: int = 0,
    incomplete: bool = False,
    error: tuple[str, str] | None = None,
) -> Reply:
    """A streamed response: a reasoning item (``summary`` streamed, ``encrypted`` content), a web search
    (``searched``: its query), a code interpreter call (``ran``: code, logs), other items of the provider's
    own tools (``provider_items``, as the provider sends them: xAI's x_search_call…), text, function ``calls``
    (call id, name, raw arguments), then completed with ``usage`` (or incomplete, or an ``error`` event:
    code, message)."""
    frames = _Frames()
    frames.event("response.created", response=_response("in_progress", []))
    if summary or encrypted:
        deltas = [
            ("response.reasoning_summary_text.delta", {"summary_index": 0, "delta": p})
            for p in text_pieces(summary)
        ]
        item = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": summary}]}
        frames.item({**item, "encrypted_content": encrypted} if encrypted else item, *deltas)
    if searched:
        action = {"type": "search", "query": searched}
        frames.item(
            {"id": "ws_1", "type": "web_search_call", "action": action},
            ("response.web_search_call.searching", {}),
        )
    if ran:
        code, logs = ran
        outputs = [{"type": "logs", "logs": logs}]
        frames.item(
            {
                "id": "ci_1",
                "type": "code_interpreter_call",
                "code": code,
                "container_id": "cntr",
                "outputs": outputs,
            }
        )
    for item in provider_items:
        frames.item(item)
    if text:
        deltas = [
            ("response.output_text.delta", {"content_index": 0, "delta": p, "logprobs": []})
            for p in text_pieces(text)
        ]
        content = [{"type": "output_text", "text": text, "annotations": []}]
        frames.item({"id": "msg_1", "type": "message", "role": "assistant", "content": content}, *deltas)
    for call_id, name, arguments in calls:
        item = {
            "id": f"fc_{call_id}",
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        }
        frames.item(item, ("response.function_call_arguments.delta", {"delta": arguments}))
    if error is not None:
        frames.event("error", code=error[0], message=error[1], param=None)
        return Reply(frames=frames.frames)
    counts = {
        "input_tokens": usage[0],
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": usage[1],
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": sum(usage),
    }
    if incomplete:
        finished = _response(
            "incomplete", frames.output, usage=counts, incomplete_details={"reason": "max_output_tokens"}
        )
        frames.event("response.incomplete", response=finished)
    else:
        frames.event("response.completed", response=_response("completed", frames.output, usage=counts))
    return Reply(frames=frames.frames)

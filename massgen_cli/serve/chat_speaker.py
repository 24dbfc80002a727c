"""A turn's reply in Chat Completions' shape: one ``chat.completion``, or ``chat.completion.chunk``
events (the role, ``reasoning_content`` as the agents work, ``content`` of the final answer, the last
chunk with ``finish_reason`` and ``massgen_metadata``, usage when asked, ``data: [DONE]``). An answer that
is a call of the client's tools is ``tool_calls`` with ``finish_reason: "tool_calls"``."""

from __future__ import annotations

from typing import Any

from massgen_cli.serve.replies import TurnEnd
from massgen_cli.serve.tool_specs import chat_tool_calls
from massgen_cli.serve.trace import Said
from massgen_cli.serve.wire import SSE_DONE, ApiError, ChatAsk, Reply, sse


class ChatSpeaker:
    """Chat Completions' reply to ``ask`` (``reply``: the id, model and time its objects share)."""

    ending = SSE_DONE

    def __init__(self, ask: ChatAsk, reply: Reply):
        self.ask, self.reply = ask, reply

    def whole(self, end: TurnEnd) -> dict[str, Any]:
        extra = {"massgen_metadata": end.facts}
        calls = chat_tool_calls(end.calls) if end.calls is not None else None
        content = None if calls else end.answer
        return self.reply.completion(content, end.reasoning, end.result.turn_usage, extra, calls)

    def opening(self) -> list[dict[str, Any]]:
        return [self.reply.chunk({"role": "assistant", "content": ""})]

    def said(self, said: Said) -> list[dict[str, Any]]:
        pieces = (("reasoning_content", said.reasoning), ("content", said.content))
        return [self.reply.chunk({key: text}) for key, text in pieces if text]

    def closing(self, end: TurnEnd) -> list[dict[str, Any]]:
        events = []
        if end.calls is not None:
            calls = [{"index": i, **call} for i, call in enumerate(chat_tool_calls(end.calls))]
            events.append(self.reply.chunk({"tool_calls": calls}))
        finish = "tool_calls" if end.calls is not None else "stop"
        events.append(self.reply.chunk({}, finish, massgen_metadata=end.facts))
        if self.ask.include_usage:
            events.append(self.reply.usage_chunk(end.result.turn_usage))
        return events

    def broken(self, error: ApiError) -> list[dict[str, Any]]:
        return [error.body()]

    def frame(self, data: dict[str, Any]) -> bytes:
        return sse(data)

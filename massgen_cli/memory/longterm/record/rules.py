"""What reaches long-term memory from a span of conversation.

- Always: user messages and answers (an assistant's text, a ``new_answer``); never system messages,
  the workflow tools (``new_answer``/``vote``/``share_memory``) or the memory tools as tool calls.
- The model's reasoning when ``record_reasoning``.
- What ``read_file`` read, as a compact ``read PATH: text`` record (unless ``record_file_reads`` is off).
- Other tool calls when ``record_all_tool_calls``: one ``[Tool call]`` and one ``[Tool result]`` record
  each, cut to ``tool_argument_limit``.
- MCP tool calls (``mcp__…``) when ``record_all_tool_calls`` or ``include_mcp_tools``, shaped by
  ``mcp_summarization``: ``aggregate`` (one record for the span: which tools ran, how often, each result's
  size and first line), ``each`` (as other tools) or ``none`` (not recorded).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from massgen_cli.config.memory import RecordingConfig
from massgen_cli.memory.longterm.record.memories import RecordMessage
from massgen_cli.messages import Message, ToolCallPart

FILE_READ = "read_file"
FILE_READ_CHARS = 2000
FIRST_LINE_CHARS = 120
LINE_NUMBER = re.compile(r"^\s*\d+\t")
WORKFLOW_TOOLS = frozenset({"new_answer", "vote", "submit", "restart_orchestration", "share_memory"})
MEMORY_TOOLS = frozenset({"memory_search", "memory_save", "memory_forget"})
"""Calls on long-term memory itself: what they save is recorded by the call, and a search's listing
recorded again would make a memory of memories."""
MCP_PREFIX = "mcp__"


def messages_to_record(
    messages: Sequence[Message], settings: RecordingConfig, *, reasoning: str = ""
) -> list[RecordMessage]:
    """The messages to store for a span of conversation; the model's ``reasoning`` in that span goes
    before its first assistant message when ``record_reasoning`` asks for it."""
    span = _Span(settings, f"[Reasoning] {reasoning}" if reasoning and settings.record_reasoning else "")
    for message in messages:
        role = message.get("role")
        if role == "user" and message.get("content"):
            span.add(str(message["content"]), "user")
        elif role == "assistant":
            span.assistant(message)
        elif role == "tool":
            span.tool_result(message)
    return span.finish()


@dataclass
class _Span:
    settings: RecordingConfig
    reasoning: str = ""
    recorded: list[RecordMessage] = field(default_factory=list)
    calls: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    aggregated: list[str] = field(default_factory=list)
    used: Counter[str] = field(default_factory=Counter)

    def add(self, content: str, role: str = "assistant") -> None:
        self.recorded.append({"role": role, "content": content})

    def assistant(self, message: Message) -> None:
        if self.reasoning:
            self.add(self.reasoning)
            self.reasoning = ""
        if message.get("content"):
            self.add(str(message["content"]))
        for call in message.get("tool_calls") or []:
            name, arguments = _call_parts(call)
            self.calls[str(call.get("id"))] = (name, arguments)
            if name == "new_answer" and arguments.get("content"):
                self.add(str(arguments["content"]))
            elif self._mode(name) == "each":
                self.add(f"[Tool call] {name}({self._cut(_arguments_text(arguments))})")

    def tool_result(self, message: Message) -> None:
        call_id = str(message.get("tool_call_id"))
        name, arguments = self.calls.get(call_id, (str(message.get("name") or "tool"), {}))
        content = str(message.get("content") or "")
        mode = self._mode(name)
        if name == FILE_READ and self.settings.record_file_reads:
            self.recorded += file_read_record(content)
        elif mode == "each":
            self.add(f"[Tool result] {name}: {self._cut(content)}")
        elif mode == "aggregate":
            self.used[name] += 1
            first = content.strip().split("\n", 1)[0][:FIRST_LINE_CHARS]
            call = f"{name}({self._cut(_arguments_text(arguments))})"
            self.aggregated.append(f"- {call} → {len(content):,} chars: {first}")

    def finish(self) -> list[RecordMessage]:
        if self.reasoning:
            self.add(self.reasoning)
        if self.aggregated:
            counts = ", ".join(f"{name} ×{count}" for name, count in self.used.items())
            self.add("\n".join([f"[MCP tools used: {counts}]", *self.aggregated]))
        return self.recorded

    def _mode(self, name: str) -> str:
        """How a call of ``name`` is recorded: ``each``, ``aggregate`` or ``none``."""
        settings = self.settings
        if name in WORKFLOW_TOOLS or name in MEMORY_TOOLS:
            return "none"
        if name.startswith(MCP_PREFIX):
            wanted = settings.record_all_tool_calls or settings.include_mcp_tools
            return settings.mcp_summarization if wanted else "none"
        return "each" if settings.record_all_tool_calls else "none"

    def _cut(self, text: str) -> str:
        limit = self.settings.tool_argument_limit
        return text if len(text) <= limit else text[: limit - 1] + "…"


def file_read_record(result: str) -> list[RecordMessage]:
    """``read PATH: text`` for a ``read_file`` result (line numbers dropped, bounded); none for an error."""
    header, _, body = result.partition("\n")
    if result.startswith("Error:") or ": lines " not in header:
        return []
    path = header.split(": lines ", 1)[0]
    text = "\n".join(LINE_NUMBER.sub("", line) for line in body.splitlines()).strip()
    record = f"read {path}: {text}"
    return [
        {
            "role": "assistant",
            "content": record[: FILE_READ_CHARS - 1] + "…" if len(record) > FILE_READ_CHARS else record,
        }
    ]


def _call_parts(call: ToolCallPart) -> tuple[str, dict[str, Any]]:
    function = call.get("function") or {}
    raw: Any = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (json.JSONDecodeError, TypeError, ValueError):
        arguments = {"raw": raw}
    return str(function.get("name") or "?"), arguments if isinstance(arguments, dict) else {}


def _arguments_text(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)

"""What reaches long-term memory: user messages, reasoning and answers; never system messages or the
workflow tools themselves. What ``read_file`` read, as a compact ``read PATH: text`` record (unless
``record_file_reads`` is off). Other tool calls only when ``recording`` asks, summarised as it says."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from massgen_cli.config.memory import RecordingConfig
from massgen_cli.memory.longterm.records import RecordMessage
from massgen_cli.messages import Message, ToolCallPart

FILE_READ = "read_file"
FILE_READ_CHARS = 2000
LINE_NUMBER = re.compile(r"^\s*\d+\t")
WORKFLOW_TOOLS = frozenset({"new_answer", "vote", "submit", "restart_orchestration", "share_memory"})
MCP_PREFIX = "mcp__"


def messages_to_record(
    messages: Sequence[Message], settings: RecordingConfig, *, reasoning: str = ""
) -> list[RecordMessage]:
    """The messages to store for a span of conversation; the model's ``reasoning`` in that span goes
    before its first assistant message when ``record_reasoning`` asks for it."""
    recorded: list[RecordMessage] = []
    tool_names: dict[str, str] = {}
    used: Counter[str] = Counter()
    pending = f"[Reasoning] {reasoning}" if reasoning and settings.record_reasoning else ""
    for message in messages:
        role = message.get("role")
        if role == "user" and message.get("content"):
            recorded.append({"role": "user", "content": str(message["content"])})
        elif role == "assistant":
            if pending:
                recorded.append({"role": "assistant", "content": pending})
                pending = ""
            recorded += _assistant(message, settings, tool_names, used)
        elif role == "tool":
            recorded += _tool_result(message, settings, tool_names)
    if pending:
        recorded.append({"role": "assistant", "content": pending})
    if used and settings.mcp_summarization == "aggregate":
        summary = ", ".join(f"{name} ({count}x)" for name, count in used.items())
        recorded.append({"role": "assistant", "content": f"[Tools used: {summary}]"})
    return recorded


def _assistant(
    message: Message, settings: RecordingConfig, tool_names: dict[str, str], used: Counter[str]
) -> list[RecordMessage]:
    recorded: list[RecordMessage] = []
    if message.get("content"):
        recorded.append({"role": "assistant", "content": str(message["content"])})
    for call in message.get("tool_calls") or []:
        name, arguments = _call_parts(call)
        tool_names[str(call.get("id"))] = name
        if name == "new_answer" and arguments.get("content"):
            recorded.append({"role": "assistant", "content": str(arguments["content"])})
        elif _records_tool(name, settings):
            used[name] += 1
            if settings.mcp_summarization != "aggregate":
                recorded.append({"role": "assistant", "content": _call_line(name, arguments, settings)})
    return recorded


def _tool_result(
    message: Message, settings: RecordingConfig, tool_names: dict[str, str]
) -> list[RecordMessage]:
    name = tool_names.get(str(message.get("tool_call_id")), str(message.get("name") or "tool"))
    if name == FILE_READ and settings.record_file_reads:
        return file_read_record(str(message.get("content") or ""))
    if not _records_tool(name, settings) or settings.mcp_summarization == "aggregate":
        return []
    content = str(message.get("content") or "")
    if settings.mcp_summarization == "each":
        content = _cut(content, settings.tool_argument_limit)
    return [{"role": "assistant", "content": f"[Tool result] {name}: {content}"}]


def file_read_record(result: str) -> list[RecordMessage]:
    """``read PATH: text`` for a ``read_file`` result (line numbers dropped, bounded); none for an error."""
    header, _, body = result.partition("\n")
    if result.startswith("Error:") or ": lines " not in header:
        return []
    path = header.split(": lines ", 1)[0]
    text = "\n".join(LINE_NUMBER.sub("", line) for line in body.splitlines()).strip()
    return [{"role": "assistant", "content": _cut(f"read {path}: {text}", FILE_READ_CHARS)}]


def _records_tool(name: str, settings: RecordingConfig) -> bool:
    if name in WORKFLOW_TOOLS:
        return False
    return settings.record_all_tool_calls or (settings.include_mcp_tools and name.startswith(MCP_PREFIX))


def _call_parts(call: ToolCallPart) -> tuple[str, dict[str, Any]]:
    function = call.get("function") or {}
    raw: Any = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (json.JSONDecodeError, TypeError, ValueError):
        arguments = {"raw": raw}
    return str(function.get("name") or "?"), arguments if isinstance(arguments, dict) else {}


def _call_line(name: str, arguments: dict[str, Any], settings: RecordingConfig) -> str:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    if settings.mcp_summarization == "each":
        text = _cut(text, settings.tool_argument_limit)
    return f"[Tool call] {name}({text})"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

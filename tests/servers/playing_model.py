"""A model behind ``FakeProviderServer`` that plays a coordinated turn on each wire format the fake
servers speak (Chat Completions, Responses, Anthropic Messages, Gemini's generateContent), deciding from
the request alone, as a model does: it calls once the config's own tool (a custom or MCP tool) that the
user's question names, else the first it is offered, a path argument filled with the file the question
names (else the first file among the places it may read), then answers with ``new_answer`` while no
answer is in view, votes for the first answer once one is, accepts the final answer when asked to
evaluate it, and presents a final answer as text; presenting with a context path it may write, it first
writes a note there. Asked about images with no instructions and no tools (a tool asking it to look), it
says what it was sent. Offered no functions but asked for a JSON decision (Gemini's JSON schema, or the
schema in its instructions), it answers the JSON; offered Gemini's own tools, it reports a search and a
code run as Gemini does. Several agents' requests may arrive at once."""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
from typing import Any

from tests.servers.fake_gemini import SIGNATURE, field, gemini_stream
from tests.servers.fake_providers import RecordedRequest, Reply, anthropic_stream, openai_stream
from tests.servers.fake_responses import responses_stream

NO_ANSWERS = "(no answers yet)"
FINAL_TEXT = "The agents agree: this is the final answer."
NOTE = "final_note.md"
WRITABLE_ROOT = re.compile(r"- (/[^\n]*?) \(write in the final presentation\)")


class PlayingModel:
    """Callable as a ``FakeProviderServer`` responder. ``first_calls`` (tool name → arguments): tools it
    calls, when offered, before any other in a step that has used none yet."""

    def __init__(self, first_calls: dict[str, dict[str, Any]] | None = None) -> None:
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._first_calls = dict(first_calls or {})

    def __call__(self, request: RecordedRequest) -> Reply:
        wire = _wire(request.path)
        tools = _offered(wire, request.body)
        if not tools and not _instructed(wire, request.body) and (images := images_in(request.body)):
            return _reply(wire, looked_at(images), None, request.body)
        text = "\n".join(_strings(request.body))
        question = "\n".join(_strings(_user_messages(wire, request.body)))
        actions = _json_actions(request.body) if wire == "gemini" and not tools else {}
        call = self._decide(tools or actions, text, question, _has_tool_result(wire, request.body))
        if call is None:
            return _reply(wire, FINAL_TEXT, None, request.body)
        if actions:
            return _reply(wire, json.dumps({"action": call[1], **call[2]}), None, request.body)
        return _reply(wire, "", call, request.body)

    def _decide(
        self, tools: dict[str, dict[str, Any]], text: str, question: str, used_a_tool: bool
    ) -> tuple[str, str, dict[str, Any]] | None:
        with self._lock:
            number = next(self._numbers)
        call_id = f"call_{number}"
        own = [name for name in tools if name.startswith(("custom_tool__", "mcp__"))]
        own.sort(key=lambda name: name.removeprefix("custom_tool__") not in question)  # named ones first
        if "submit" in tools:
            return call_id, "submit", {}
        first = [name for name in self._first_calls if name in tools]
        if first and not used_a_tool:
            return call_id, first[0], self._first_calls[first[0]]
        if own and not used_a_tool:
            return call_id, own[0], _arguments(tools[own[0]], question, text)
        if "vote" in tools and NO_ANSWERS not in text and "<agent1>" in text:
            return call_id, "vote", {"agent_id": "agent1", "reason": "it answers the question"}
        if "new_answer" in tools:
            return call_id, "new_answer", {"content": f"Answer {number} of the playing model."}
        root = WRITABLE_ROOT.search(text)
        if root and "write_file" in tools and not used_a_tool:
            return call_id, "write_file", {"path": f"{root.group(1)}/{NOTE}", "content": FINAL_TEXT}
        return None


def _strings(node: Any) -> list[str]:
    """Every string in a request body (messages, instructions, tool results)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [found for value in node.values() for found in _strings(value)]
    if isinstance(node, list):
        return [found for value in node for found in _strings(value)]
    return []


def _wire(path: str) -> str:
    if ":streamGenerateContent" in path:
        return "gemini"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "messages"
    return "chat"


def _offered(wire: str, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The function tools offered: name → JSON schema of the arguments."""
    found = {}
    for tool in body.get("tools") or ():
        if wire == "chat" and tool.get("type") == "function":
            found[tool["function"]["name"]] = tool["function"].get("parameters") or {}
        elif wire == "responses" and tool.get("type") == "function":
            found[tool["name"]] = tool.get("parameters") or {}
        elif wire == "messages" and "input_schema" in tool:
            found[tool["name"]] = tool["input_schema"]
        for function in (field(tool, "functionDeclarations") or []) if wire == "gemini" else ():
            found[function["name"]] = field(function, "parametersJsonSchema") or {}
    return found


SCHEMA_IN_WORDS = "matches this JSON schema, and nothing else:\n"


def _json_actions(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The decisions a Gemini request asks for as JSON (its schema's ``action`` values): as pseudo-tools."""
    schema = field(field(body, "generationConfig"), "responseJsonSchema")
    if schema is None:
        instruction = "\n".join(_strings(field(body, "systemInstruction")))
        if SCHEMA_IN_WORDS not in instruction:
            return {}
        schema = json.loads(instruction.split(SCHEMA_IN_WORDS, 1)[1].splitlines()[0])
    enums = re.findall(r'"action": \{"type": "string", "enum": (\[[^\]]*\])', json.dumps(schema))
    return {action: {} for found in enums for action in json.loads(found)}


def _has_tool_result(wire: str, body: dict[str, Any]) -> bool:
    if wire == "chat":
        return any(message.get("role") == "tool" for message in body.get("messages", ()))
    if wire == "responses":
        return any(item.get("type") == "function_call_output" for item in body.get("input", ()))
    if wire == "gemini":
        parts = [part for content in body.get("contents", ()) for part in content.get("parts", ())]
        return any(field(part, "functionResponse") for part in parts)
    return any(
        isinstance(message.get("content"), list)
        and any(block.get("type") == "tool_result" for block in message["content"])
        for message in body.get("messages", ())
    )


def _arguments(schema: dict[str, Any], question: str, text: str) -> dict[str, Any]:
    """A value of each required property's type (what a model fills in), and each path property the file
    the question names (else the first file among the places it may read)."""
    samples = {"integer": 2, "number": 3, "string": "massgen", "boolean": True, "array": [], "object": {}}
    properties = schema.get("properties") or {}
    filled = {
        name: samples.get(str((properties.get(name) or {}).get("type")), "massgen")
        for name in schema.get("required") or ()
    }
    file = FILE_NAMED.search(question) or READABLE_FILE.search(text)
    paths = [name for name in properties if name.endswith("_path")]
    return filled | ({name: file.group(1) for name in paths} if file else {})


FILE_NAMED = re.compile(r"(?<![\w/.-])([\w./-]+\.(?:png|jpe?g|gif|webp|pdf|mp4|txt|md))\b")
READABLE_FILE = re.compile(r"- (/[^\n]*?\.\w{2,4}) \(read\)")
LOOKED_AT = "Looked at"


def looked_at(images: list[tuple[str, int]]) -> str:
    """What the model says it was sent: each image's media type and size in bytes."""
    return f"{LOOKED_AT} {len(images)} image(s): " + "; ".join(
        f"{kind}, {size} bytes" for kind, size in images
    )


def images_in(node: Any) -> list[tuple[str, int]]:
    """The images in a request body (data URLs, or Anthropic's base64 sources): media type and size."""
    if isinstance(node, str):
        url = DATA_URL.match(node)
        return [(url.group(1), len(base64.b64decode(url.group(2))))] if url else []
    kind = str(node.get("media_type") or field(node, "mimeType") or "") if isinstance(node, dict) else ""
    if isinstance(node, dict) and kind.startswith("image/") and "data" in node:
        return [(kind, len(base64.b64decode(node["data"])))]
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    return [image for value in values for image in images_in(value)]


DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,([A-Za-z0-9+/=]+)$")


def _instructed(wire: str, body: dict[str, Any]) -> bool:
    """Whether the request has a system prompt (every step of a turn has)."""
    if wire == "chat":
        return any(message.get("role") == "system" for message in body.get("messages", ()))
    if wire == "responses":
        return bool(body.get("instructions")) or any(
            item.get("role") in ("system", "developer") for item in body.get("input", ())
        )
    if wire == "gemini":
        return bool(field(body, "systemInstruction"))
    return bool(body.get("system"))


def _user_messages(wire: str, body: dict[str, Any]) -> list[Any]:
    messages = {"responses": body.get("input", ()), "gemini": body.get("contents", ())}.get(
        wire, body.get("messages", ())
    )
    return [message for message in messages if isinstance(message, dict) and message.get("role") == "user"]


def _reply(wire: str, text: str, call: tuple[str, str, dict[str, Any]] | None, body: dict[str, Any]) -> Reply:
    if wire == "gemini":
        return _gemini_reply(text, call, body)
    calls = [(call[0], call[1], json.dumps(call[2]))] if call else []
    if wire == "responses":
        return responses_stream(text, calls=calls)
    if wire == "messages":
        return anthropic_stream(text, tool_uses=calls)
    return openai_stream(text, tool_calls=calls)


def _gemini_reply(text: str, call: tuple[str, str, dict[str, Any]] | None, body: dict[str, Any]) -> Reply:
    """As Gemini answers: a thought signature on its calls (or its text), and a search and a code run
    reported where its own tools are on."""
    tools = body.get("tools") or []
    searches = any(field(tool, "googleSearch") is not None for tool in tools)
    runs = any(field(tool, "codeExecution") is not None for tool in tools)
    return gemini_stream(
        text,
        calls=[call] if call else [],
        signature=SIGNATURE,
        searched=["what should we build next"] if searches else [],
        sources=[("Roadmaps", "https://example.com/roadmaps")] if searches else [],
        ran=("print(6 * 7)", "42\n", "OUTCOME_OK") if runs else None,
    )

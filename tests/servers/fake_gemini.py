"""Gemini's own API on the wire, for ``FakeProviderServer``: ``streamGenerateContent?alt=sse`` replies as
Google's server streams them (one JSON response per server-sent event), its error bodies, and the checks
the real API makes before it answers (``FakeGeminiServer``), read by the real ``google-genai`` SDK.

Bodies are read in both spellings the API accepts: the SDK sends most fields in camelCase
(``functionDeclarations``) and the contents of free-form objects as written (``parameters_json_schema``,
``mime_type``)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tests.servers.fake_providers import FakeProviderServer, RecordedRequest, Reply, text_pieces

GEMINI_PATH = re.compile(r"^(?P<root>.*)/(?P<version>v1(beta)?)/models/(?P<model>[^/:]+):(?P<method>\w+)")
SEPARATE_TOOL_MODELS = re.compile(r"^gemini-(1|2)([.-]|$)")
SIGNATURE = "c2lnbmF0dXJlLW9mLWEtdGhvdWdodA=="
"""A thought signature, as Gemini sends it (base64)."""


def field(holder: Any, camel: str) -> Any:
    """``holder``'s field in camelCase, or in snake_case as the SDK leaves some."""
    if not isinstance(holder, dict):
        return None
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return holder.get(camel, holder.get(snake))


def gemini_model(path: str) -> str | None:
    """The model a Gemini API path names, or None for another API's path."""
    found = GEMINI_PATH.match(path)
    return found.group("model") if found else None


def _chunk(parts: list[dict[str, Any]], **candidate: Any) -> str:
    usage = candidate.pop("usage", None)
    body: dict[str, Any] = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **candidate}],
        "modelVersion": "gemini-fake",
        "responseId": "resp-fake",
    }
    if usage is not None:
        body["usageMetadata"] = usage
    return f"data: {json.dumps(body)}\r\n\r\n"


def gemini_stream(
    text: str = "",
    *,
    thought: str = "",
    calls: Sequence[tuple[str | None, str, dict[str, Any]]] = (),
    searched: Sequence[str] = (),
    sources: Sequence[tuple[str, str]] = (),
    ran: tuple[str, str, str] | None = None,
    usage: tuple[int, int] = (12, 7),
    thoughts: int = 0,
    cached: int = 0,
    tool_prompt: int = 0,
    signature: str | None = None,
    finish: str = "STOP",
) -> Reply:
    """A streamed response: ``thought`` (streamed as thought parts), code Gemini ran (``ran``: code,
    output, outcome), ``text``, function ``calls`` (id or None, name, arguments; each carries
    ``signature`` when given, as Gemini 3 sends them), then a last chunk with the finish, the grounding
    (``searched`` queries, ``sources`` as (title, uri)), ``usage`` (prompt, candidates) and its details,
    and ``signature`` on an empty text part when there are no calls."""
    frames = [_chunk([{"text": piece, "thought": True}]) for piece in text_pieces(thought)]
    if ran is not None:
        code, output, outcome = ran
        frames.append(_chunk([{"executableCode": {"language": "PYTHON", "code": code}}]))
        frames.append(_chunk([{"codeExecutionResult": {"outcome": outcome, "output": output}}]))
    frames += [_chunk([{"text": piece}]) for piece in text_pieces(text)]
    for call_id, name, arguments in calls:
        call = {"name": name, "args": arguments, **({"id": call_id} if call_id else {})}
        frames.append(
            _chunk([{"functionCall": call, **({"thoughtSignature": signature} if signature else {})}])
        )
    last: dict[str, Any] = {"finishReason": finish, "usage": _usage(usage, thoughts, cached, tool_prompt)}
    if searched or sources:
        chunks = [{"web": {"uri": uri, "title": title}} for title, uri in sources]
        last["groundingMetadata"] = {"webSearchQueries": list(searched), "groundingChunks": chunks}
    closing = [{"text": "", "thoughtSignature": signature}] if signature and not calls else []
    frames.append(_chunk(closing, **last))
    return Reply(frames=frames)


def _usage(usage: tuple[int, int], thoughts: int, cached: int, tool_prompt: int) -> dict[str, int]:
    counts = {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1]}
    extra = {"thoughtsTokenCount": thoughts, "cachedContentTokenCount": cached}
    counts |= {name: value for name, value in extra.items() if value}
    if tool_prompt:
        counts["toolUsePromptTokenCount"] = tool_prompt
    return counts | {"totalTokenCount": usage[0] + usage[1] + thoughts + tool_prompt}


def gemini_error(
    code: int,
    status: str,
    message: str,
    *,
    details: list[Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error as Google's APIs send it."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        error["details"] = details
    return Reply(status=code, body={"error": error}, headers=headers or {})


def gemini_refusal(request: RecordedRequest) -> Reply | None:
    """The error the real API answers ``request`` with, or None when it would answer: a path it does not
    serve, no key, Gemini's own tools beside functions on a model that cannot mix them (or, on one that
    can, without asking for server-side tool invocations), a Gemini 3 function call given back without
    its thought signature, or function responses that do not answer the calls of the turn before."""
    found = GEMINI_PATH.match(request.path)
    if found is None:
        return None if not request.path.startswith("/gemini") else gemini_error(404, "NOT_FOUND", "Not found")
    if found.group("method") != "streamGenerateContent" or "alt=sse" not in request.path:
        return gemini_error(404, "NOT_FOUND", f"method {found.group('method')} is not served here")
    if not request.headers.get("x-goog-api-key"):
        return gemini_error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers")
    model, body = found.group("model"), request.body
    problem = _tools_problem(model, body) or _history_problem(model, body)
    return gemini_error(400, "INVALID_ARGUMENT", problem) if problem else None


def _tools_problem(model: str, body: dict[str, Any]) -> str:
    tools = body.get("tools") or []
    functions = any(field(tool, "functionDeclarations") for tool in tools)
    own = any(
        field(tool, "googleSearch") is not None or field(tool, "codeExecution") is not None for tool in tools
    )
    if not (functions and own):
        return ""
    if SEPARATE_TOOL_MODELS.match(model):
        return "Tool use with function calling is unsupported by the model."
    if not field(field(body, "toolConfig"), "includeServerSideToolInvocations"):
        return "Built-in tools with function calling need tool_config.include_server_side_tool_invocations."
    return ""


def _history_problem(model: str, body: dict[str, Any]) -> str:
    contents = body.get("contents") or []
    for index, content in enumerate(contents):
        parts = content.get("parts") or []
        calls = [part for part in parts if field(part, "functionCall")]
        if not calls:
            continue
        if not SEPARATE_TOOL_MODELS.match(model) and any(not field(p, "thoughtSignature") for p in calls):
            return "Function call is missing a thought_signature in functionCall parts."
        answered = contents[index + 1].get("parts", []) if index + 1 < len(contents) else []
        responses = [part for part in answered if field(part, "functionResponse")]
        if len(responses) != len(calls):
            return (
                "Please ensure that the number of function response parts is equal to the number of "
                "function call parts of the function call turn."
            )
    return ""


class FakeGeminiServer(FakeProviderServer):
    """A ``FakeProviderServer`` that first checks each Gemini request as the real API does (see
    ``gemini_refusal``); other APIs' requests go straight to their reply."""

    def next_reply(self, request: RecordedRequest) -> Reply:
        return gemini_refusal(request) or super().next_reply(request)

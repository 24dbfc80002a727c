"""The Gemini backend through Google's real SDK against a local server that speaks Gemini's own API
(``streamGenerateContent``) and refuses what the real API refuses: streamed text and thoughts, usage,
function calls and the model turn given back, Gemini's own tools, JSON decisions, errors and retries."""

from __future__ import annotations

import json

import pytest

from massgen_cli.attachments import Attachment
from massgen_cli.backends.base import Request, ToolSpec
from massgen_cli.backends.registry import create_backend
from massgen_cli.backends.stream_failures import MalformedResponseError
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import (
    BackendError,
    BackendTimeoutError,
    ConnectionFailedError,
    ContextLengthError,
    RateLimitError,
    ServerError,
)
from massgen_cli.events import (
    Finish,
    ReasoningDelta,
    ReasoningState,
    ServerToolUse,
    TextDelta,
    ToolCall,
    Usage,
)
from massgen_cli.messages import Message, with_attachments
from tests.backends.conftest import TEST_KEY
from tests.servers.fake_gemini import SIGNATURE, field, gemini_error, gemini_stream
from tests.servers.fake_providers import Reply, collect, collect_until_error

QUESTION: list[Message] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Capital of France?"},
]
LOOKUP = ToolSpec(
    "lookup", "Weather of a city.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def texts(events: list) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


async def test_a_plain_answer_streams_in_pieces_with_its_usage(make_gemini, gemini_server):
    gemini_server.script(gemini_stream("Paris is the capital of France.", usage=(20, 6)))
    backend = make_gemini(temperature=0.3, max_tokens=200)
    events = await collect(backend, Request(QUESTION))
    assert texts(events) == "Paris is the capital of France."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1, "streamed as it came"
    assert events[-2:] == [Usage(20, 6), Finish("stop")]
    [request] = gemini_server.requests
    assert request.path == "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == TEST_KEY
    body = request.body
    assert field(body, "systemInstruction")["parts"] == [{"text": "You are terse."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Capital of France?"}]}]
    assert "tools" not in body
    generation = field(body, "generationConfig")
    assert (generation["temperature"], generation["maxOutputTokens"]) == (0.3, 200)
    assert field(generation["thinkingConfig"], "includeThoughts") is True, (
        "2.5 shows its thoughts, as MassGen"
    )


async def test_thoughts_stream_as_reasoning_and_usage_counts_thinking_and_tool_prompts(
    make_gemini, gemini_server
):
    reply = gemini_stream(
        "42.", thought="Six times seven.", usage=(30, 2), thoughts=9, cached=10, tool_prompt=5
    )
    gemini_server.script(reply)
    events = await collect(make_gemini(), Request(QUESTION))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Six times seven."
    assert texts(events) == "42."
    assert Usage(35, 11, cached_tokens=10, reasoning_tokens=9) in events


def round_trip(events: list, messages: list[Message], results: dict[str, str]) -> list[Message]:
    """``messages`` with the reply's calls (and what Gemini asked to get back) and their results."""
    calls = [e for e in events if isinstance(e, ToolCall)]
    kept = [e.item for e in events if isinstance(e, ReasoningState)]
    parts = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
        for c in calls
    ]
    assistant: Message = {"role": "assistant", "content": None, "tool_calls": parts}
    if kept:
        assistant["reasoning_items"] = kept
    answers: list[Message] = [
        {"role": "tool", "tool_call_id": c.id, "content": results[c.name]} for c in calls
    ]
    return [*messages, assistant, *answers]


async def test_function_calls_come_back_with_gemini_3s_signed_turn_and_their_results(
    make_gemini, gemini_server
):
    """Gemini 3 refuses a function call given back without its thought signature: the turn it sent is
    kept and given back as it came, its results answer each call by id (one without an id got ours)."""
    calls = [("fc_1", "lookup", {"city": "Paris"}), (None, "lookup", {"city": "Rome"})]
    gemini_server.script(gemini_stream(calls=calls, signature=SIGNATURE), gemini_stream("Both sunny."))
    backend = make_gemini(model="gemini-3-flash-preview")
    first = await collect(backend, Request(QUESTION, tools=(LOOKUP,)))
    made = [e for e in first if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in made] == [
        ("lookup", {"city": "Paris"}),
        ("lookup", {"city": "Rome"}),
    ]
    assert made[0].id == "fc_1" and made[1].id.startswith("call_")
    assert first[-1] == Finish("tool_calls")
    messages = round_trip(first, QUESTION, {"lookup": "sunny"})
    second = await collect(backend, Request(messages, tools=(LOOKUP,)))
    assert texts(second) == "Both sunny."
    model_turn, results = gemini_server.requests[1].body["contents"][1:]
    assert [field(p, "thoughtSignature") for p in model_turn["parts"]] == [SIGNATURE, SIGNATURE]
    assert [field(p, "functionCall")["id"] for p in model_turn["parts"]] == [made[0].id, made[1].id]
    answered = [field(p, "functionResponse") for p in results["parts"]]
    assert [(r["id"], r["name"], r["response"]) for r in answered] == [
        (made[0].id, "lookup", {"output": "sunny"}),
        (made[1].id, "lookup", {"output": "sunny"}),
    ]
    unsigned = [{k: v for k, v in m.items() if k != "reasoning_items"} for m in messages]
    _, error = await collect_until_error(backend, Request(unsigned, tools=(LOOKUP,)))
    assert "missing a thought_signature" in str(error), "the server checks what the kept turn gives back"


async def test_a_signed_text_reply_is_kept_whole_and_given_back(make_gemini, gemini_server):
    """Gemini 3 signs a reply's last (empty) piece: the kept turn is the text in one part, signed."""
    gemini_server.script(gemini_stream("Paris is the capital.", signature=SIGNATURE), gemini_stream("Yes."))
    backend = make_gemini(model="gemini-3-flash-preview")
    [kept] = [e.item for e in await collect(backend, Request(QUESTION)) if isinstance(e, ReasoningState)]
    assert kept["parts"] == [{"text": "Paris is the capital.", "thought_signature": SIGNATURE}]
    echo: Message = {"role": "assistant", "content": "Paris is the capital.", "reasoning_items": [kept]}
    await collect(backend, Request([*QUESTION, echo, {"role": "user", "content": "Sure?"}]))
    given_back = gemini_server.requests[1].body["contents"][1]
    assert given_back == {
        "role": "model",
        "parts": [{"text": "Paris is the capital.", "thoughtSignature": SIGNATURE}],
    }


async def test_a_request_without_functions_writes_earlier_calls_as_text(make_gemini, gemini_server):
    gemini_server.script(gemini_stream(calls=[("fc_1", "lookup", {"city": "Oslo"})]), gemini_stream("Snow."))
    backend = make_gemini()
    first = await collect(backend, Request(QUESTION, tools=(LOOKUP,)))
    await collect(backend, Request(round_trip(first, QUESTION, {"lookup": "snow"})))
    contents = gemini_server.requests[1].body["contents"]
    assert contents[1:] == [
        {"role": "model", "parts": [{"text": '[called lookup({"city": "Oslo"})]'}]},
        {"role": "user", "parts": [{"text": "[result of lookup: snow]"}]},
    ]


@pytest.mark.parametrize("enabled", [True, False])
async def test_google_search_and_code_execution_are_asked_for_only_when_enabled(
    make_gemini, gemini_server, enabled
):
    """MassGen's keys turn on Gemini's own tools beside our functions (Gemini 3 asks for the server-side
    invocations to mix them); what Gemini searched and ran is reported, its text left as it came."""
    gemini_server.script(
        gemini_stream(
            "It is 42; sources agree.",
            searched=["answer to everything"],
            sources=[("Guide", "https://guide.example/42"), ("Wiki", "https://wiki.example/42")],
            ran=("print(6 * 7)", "42\n", "OUTCOME_OK"),
        )
        if enabled
        else gemini_stream("It is 42.")
    )
    backend = make_gemini(
        model="gemini-3-pro-preview", enable_web_search=enabled, enable_code_execution=enabled
    )
    events = await collect(backend, Request(QUESTION, tools=(LOOKUP,)))
    body = gemini_server.requests[0].body
    own = [tool for tool in body["tools"] if not field(tool, "functionDeclarations")]
    functions = [f["name"] for tool in body["tools"] for f in field(tool, "functionDeclarations") or ()]
    assert functions == ["lookup"]
    used = [(e.name, e.arguments, e.summary, e.ok) for e in events if isinstance(e, ServerToolUse)]
    if not enabled:
        assert own == [] and "toolConfig" not in body and used == []
        return
    assert own == [{"googleSearch": {}}, {"codeExecution": {}}]
    assert field(field(body, "toolConfig"), "includeServerSideToolInvocations") is True
    assert used == [
        ("code_execution", {"code": "print(6 * 7)"}, "42", True),
        (
            "google_search",
            {"queries": ["answer to everything"]},
            "2 source(s): Guide (https://guide.example/42); Wiki (https://wiki.example/42)",
            True,
        ),
    ]
    assert texts(events) == "It is 42; sources agree."


SCHEMA = {"type": "object", "properties": {"action": {"type": "string", "enum": ["new_answer"]}}}


async def test_gemini_2_5_with_its_own_tools_decides_in_json_beside_them(make_gemini, gemini_server):
    """Gemini 2.5 refuses its own tools beside functions: with search on, the backend says it calls no
    tools (decisions come as JSON) and asks for the JSON in words, its search on."""
    gemini_server.script(gemini_stream('{"action": "new_answer", "content": "Paris"}'), gemini_stream("{}"))
    searching = make_gemini(enable_web_search=True)
    assert not searching.capabilities.tool_calls
    await collect(searching, Request(QUESTION, response_schema=SCHEMA))
    body = gemini_server.requests[0].body
    assert body["tools"] == [{"googleSearch": {}}]
    assert "matches this JSON schema" in field(body, "systemInstruction")["parts"][0]["text"]
    assert "responseJsonSchema" not in field(body, "generationConfig")
    plain = make_gemini()
    assert plain.capabilities.tool_calls
    await collect(plain, Request(QUESTION, response_schema=SCHEMA))
    generation = field(gemini_server.requests[1].body, "generationConfig")
    assert field(generation, "responseMimeType") == "application/json"
    assert field(generation, "responseJsonSchema") == SCHEMA


async def test_images_go_inline_and_addresses_as_file_data(make_gemini, gemini_server):
    gemini_server.script(gemini_stream("A red square and a report."))
    image = Attachment("shot.png", "image/png", b"\x89PNG\r\n\x1a\nfake")
    report = Attachment("report.pdf", "application/pdf", url="https://example.com/report.pdf")
    messages = [
        QUESTION[0],
        with_attachments({"role": "user", "content": "What are these?"}, [image, report]),
    ]
    await collect(make_gemini(), Request(messages))
    [user] = gemini_server.requests[0].body["contents"]
    text, inline, address = user["parts"]
    assert text == {"text": "What are these?"}
    assert field(inline, "inlineData") == {"mime_type": "image/png", "data": image.base64()}
    assert field(address, "fileData") == {"file_uri": report.url, "mime_type": "application/pdf"}


RETRY_INFO = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]


@pytest.mark.parametrize(
    ("reply", "kind", "said"),
    [
        (
            gemini_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", details=RETRY_INFO),
            RateLimitError,
            "429",
        ),
        (gemini_error(500, "INTERNAL", "An internal error has occurred."), ServerError, "server error"),
        (
            gemini_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
            BackendError,
            "GOOGLE_API_KEY",
        ),
        (
            gemini_error(
                400,
                "INVALID_ARGUMENT",
                "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).",
            ),
            ContextLengthError,
            "too long for gemini-2.5-flash",
        ),
        (
            Reply(frames=['data: {"candidates": [{"content": {"parts": [{"text": "Par"}]}}]}\r\n\r\n']),
            ConnectionFailedError,
            "ended before",
        ),
        (
            Reply(frames=['data: {"promptFeedback": {"blockReason": "SAFETY"}}\r\n\r\n']),
            BackendError,
            "refused the request (SAFETY)",
        ),
        (Reply(frames=["data: not json\r\n\r\n"]), MalformedResponseError, "not json"),
    ],
)
async def test_failures_become_our_errors(make_gemini, gemini_server, reply, kind, said):
    gemini_server.script(reply)
    _, error = await collect_until_error(make_gemini(), Request(QUESTION))
    assert type(error) is kind and said in str(error), error
    if isinstance(error, RateLimitError):
        assert error.retry_after == 7.0, "Gemini's RetryInfo is its Retry-After"


async def test_a_server_slower_than_the_timeout_is_a_timeout(make_gemini, gemini_server):
    gemini_server.script(Reply(frames=gemini_stream("Late.").frames, delay=30))
    _, error = await collect_until_error(make_gemini(request_timeout_seconds=0.3), Request(QUESTION))
    assert isinstance(error, BackendTimeoutError) and error.retryable, error


async def test_extra_body_reaches_the_request_as_written(make_gemini, gemini_server):
    """Gemini's request fields this config has no key for (its safety settings) go in extra_body."""
    gemini_server.script(gemini_stream("Fine."))
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]
    await collect(make_gemini(extra_body={"safetySettings": safety}), Request(QUESTION))
    assert gemini_server.requests[0].body["safetySettings"] == safety


async def test_429_and_500_are_retried_until_gemini_answers(gemini_server, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", TEST_KEY)
    monkeypatch.setenv("GEMINI_BASE_URL", gemini_server.root_url)
    fast = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"}]
    gemini_server.script(
        gemini_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", details=fast),
        gemini_error(503, "UNAVAILABLE", "The model is overloaded."),
        gemini_stream("Paris."),
    )
    heard: list[type] = []
    config = BackendConfig(type="gemini", model="gemini-2.5-flash", retry_base_delay_seconds=0.01)
    backend = create_backend(config, on_retry=lambda error, attempt, delay: heard.append(type(error)))
    try:
        assert texts(await collect(backend, Request(QUESTION))) == "Paris."
    finally:
        await backend.aclose()
    assert heard == [RateLimitError, ServerError] and len(gemini_server.requests) == 3

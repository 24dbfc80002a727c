"""The shapes the server reads and writes, and what a client reads of a run's events."""

from __future__ import annotations

import pytest

from massgen_cli.events import AgentStatus, AgentText, FinalAnswer, Notice, Usage, VoteCast
from massgen_cli.serve.trace import Transcript
from massgen_cli.serve.wire import ApiError, Reply, read_chat, usage_fields, user_session


def chat(**fields):  # type: ignore[no-untyped-def]
    return {"model": "massgen", "messages": [{"role": "user", "content": "Q?"}], **fields}


def test_a_request_becomes_a_question_with_the_conversation_before_it():
    asked = read_chat(
        chat(
            messages=[
                {"role": "system", "content": "ignored"},
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": [{"type": "text", "text": "reply"}]},
                {"role": "user", "content": "second"},
            ],
            stream=True,
            stream_options={"include_usage": True},
            temperature=0.2,
            session="s-1",
        )
    )
    assert asked.question == "second" and asked.session_id == "s-1"
    assert asked.history == [{"role": "user", "content": "first"}, {"role": "assistant", "content": "reply"}]
    assert asked.stream and asked.include_usage


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"model": ""}, "model"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
         "messages[0].content"),
        ({"tools": [{"type": "function"}]}, "tools[0].function"),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"tools": [{"type": "function", "function": {"name": "vote"}}]}, "tools[0].function.name"),
        ({"tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools[0].function.name"),
        ({"functions": [{"name": "f"}]}, "functions"),
        ({"messages": [{"role": "user", "content": "Q"},
                       {"role": "tool", "tool_call_id": "c1", "content": "r"}]}, "messages"),
        ({"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}, "messages"),
        ({"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}]}]},
         "messages[1].tool_calls[0].function.arguments"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"stream": "yes"}, "stream"),
        ({"session": 7}, "session"),
    ],
)  # fmt: skip
def test_what_cannot_be_served_is_a_400_naming_its_parameter(fields, param):
    with pytest.raises(ApiError) as refused:
        read_chat(chat(**fields))
    assert refused.value.status == 400 and refused.value.param == param


def test_a_user_maps_to_a_session_of_their_own():
    assert user_session("alice") == "user-alice"
    assert read_chat(chat(user="alice")).session_id == "user-alice"
    one, other = user_session("a@x.com"), user_session("a_x.com")
    assert one.startswith("user-a_x.com-") and other == "user-a_x.com" and one != other
    assert read_chat(chat()).session_id is None


def test_the_final_answer_is_content_and_the_work_is_reasoning():
    heard = Transcript()
    said = [
        heard.hear(AgentText("a", "Thinking ")),
        heard.hear(AgentText("a", "hard.")),
        heard.hear(AgentStatus("a", "answered", "Paris.")),
        heard.hear(VoteCast("b", "a", "right")),
        heard.hear(Notice("info", "Output folder: /somewhere")),
        heard.hear(AgentText("a", "Paris is ", kind="presentation")),
        heard.hear(FinalAnswer("a", "Paris is the capital.")),
    ]
    assert [s.content for s in said] == ["", "", "", "", "", "Paris is ", "the capital."]
    assert heard.reasoning_text == "[a] Thinking hard.\n[a] new answer: Paris.\n[b] votes for a: right"


def test_an_answer_that_did_not_stream_comes_whole_and_a_broken_one_is_followed_by_the_answer():
    assert Transcript().hear(FinalAnswer("a", "All of it.")).content == "All of it."
    broken = Transcript()
    broken.hear(AgentText("a", "Half of", kind="presentation"))
    assert broken.hear(FinalAnswer("a", "The winning answer.")).content == "\n\nThe winning answer."


def test_an_error_says_no_secret(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-1234567890abcdef")
    body = ApiError(500, "the call with tok-1234567890abcdef failed").body()
    assert body["error"]["message"] == "the call with [REDACTED] failed"


def test_usage_is_reported_as_openai_does():
    fields = usage_fields(Usage(100, 20, cached_tokens=40, reasoning_tokens=5))
    assert (
        fields["prompt_tokens"] == 100 and fields["completion_tokens"] == 20 and fields["total_tokens"] == 120
    )
    assert fields["prompt_tokens_details"] == {"cached_tokens": 40}
    chunk = Reply("chatcmpl-1", "massgen", 1).chunk({"content": "x"})
    assert chunk["object"] == "chat.completion.chunk" and chunk["choices"][0]["delta"] == {"content": "x"}


def test_the_client_tools_and_their_results_after_the_question_are_read():
    tools = [{"type": "function", "function": {"name": "lookup", "description": "Looks up.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]  # fmt: skip
    function = {"name": "lookup", "arguments": '{"city": "Oslo"}'}
    call = {"id": "call_1", "type": "function", "function": function}
    messages = [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "said"},
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "rain"}]},
    ]
    asked = read_chat(chat(messages=messages, tools=tools))
    assert asked.question == "What is the weather?"
    assert asked.history == [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "said"}]
    assert [tool.name for tool in asked.tools] == ["lookup"] and asked.tools[0].description == "Looks up."
    assert asked.exchange == (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
    )
    assert read_chat(chat(messages=messages, tools=tools, tool_choice="none")).tools == ()

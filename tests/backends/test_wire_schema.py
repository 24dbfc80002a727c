"""The schema checker the fake provider servers hold every request to (``tests.servers.wire_schema``):
for each API it covers, a body as the SDK types it passes, and each rule it holds is shown to catch its
break (so a clean run of the suite means the requests were checked, not that nothing was)."""

from __future__ import annotations

import pytest

from tests.servers.wire_schema import api_of, wire_violations

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
GOOD = {
    "/v1/chat/completions": {"model": "m", "messages": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"}]},
    "/v1/responses": {"model": "m", "instructions": "s", "input": [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r"}]},
    "/v1/messages": {"model": "m", "max_tokens": 10, "system": "s", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "r"}]}]},
    "/v1beta/models/g:streamGenerateContent?alt=sse": {
        "systemInstruction": {"parts": [{"text": "s"}]},
        "contents": [{"role": "user", "parts": [{"text": "q"}]}]},
}  # fmt: skip
BROKEN = [
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "q"},
                                                         {"role": "tool", "tool_call_id": "c1", "name": "f",
                                                          "content": "r"}]}, "'name' is not a field"),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "system", "content": "a"},
                                                         {"role": "system", "content": "b"},
                                                         {"role": "user", "content": "q"}]},
     "2 system messages"),
    ("/v1/responses", {"model": "m", "input": [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": {}}]}, "expected str"),
    ("/v1/messages", {"model": "m", "max_tokens": 10, "messages": [{"role": "system", "content": "s"}]},
     "Anthropic takes the system prompt"),
    ("/v1beta/models/g:streamGenerateContent?alt=sse", {"contents": [], "thinking": True}, "'thinking'"),
]  # fmt: skip


@pytest.mark.parametrize("path", list(GOOD))
def test_a_body_as_the_sdk_types_it_passes(path):
    assert api_of(path) is not None and wire_violations(path, GOOD[path]) == []


@pytest.mark.parametrize(("path", "body", "named"), BROKEN)
def test_each_rule_catches_its_break(path, body, named):
    assert any(named in problem for problem in wire_violations(path, body)), wire_violations(path, body)


def test_openai_itself_refuses_max_tokens_and_its_own_unknown_parameters():
    question = [{"role": "user", "content": "q"}]
    body = {"model": "o4-mini", "messages": question, "max_tokens": 5, "session": "x"}
    problems = wire_violations("/v1/chat/completions", body, stands_for="openai")
    assert any("max_completion_tokens" in p for p in problems) and any("'session'" in p for p in problems)
    assert not any("'session'" in p for p in wire_violations("/v1/chat/completions", body))

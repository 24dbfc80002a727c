"""Compression properties over random conversations with tool calls."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from massgen_cli.memory.context.compression import SUMMARY_PREFIX, compress, extractive_summary, is_summary
from massgen_cli.memory.context.monitor import ContextMonitor

WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "paris", "42", "vote"]), max_size=60
)


@st.composite
def conversations(draw):  # type: ignore[no-untyped-def]
    messages = [{"role": "system", "content": "You are helpful. " + " ".join(draw(WORDS))}]
    call_number = 0
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "tools"]))
        text = " ".join(draw(WORDS))
        if kind == "tools":
            calls = draw(st.integers(1, 3))
            ids = [f"call_{call_number + i}" for i in range(calls)]
            call_number += calls
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "search", "arguments": "{}"}}
                        for i in ids
                    ],
                }
            )
            messages += [{"role": "tool", "tool_call_id": i, "content": text} for i in ids]
        else:
            messages.append({"role": kind, "content": text})
    messages.append({"role": "user", "content": "latest question " + " ".join(draw(WORDS))})
    return messages


def _check_tool_pairs(messages):  # type: ignore[no-untyped-def]
    open_ids: set[str] = set()
    for message in messages:
        if message.get("tool_calls"):
            assert not open_ids, "a tool call lost its result"
            open_ids = {call["id"] for call in message["tool_calls"]}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_ids, "a tool result lost its call"
            open_ids.discard(message["tool_call_id"])
        else:
            assert not open_ids, "a tool call lost its result"
    assert not open_ids


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(200, 3000))
def test_compression_properties(messages, window):  # type: ignore[no-untyped-def]
    monitor = ContextMonitor("gpt-4o", window, trigger_threshold=0.75, target_ratio=0.4)
    target = monitor.target_tokens
    result = asyncio.run(compress(messages, monitor, target_tokens=target))
    systems = [m for m in messages if m["role"] == "system"]
    pinned = monitor.messages_tokens([*systems, messages[-1]])
    assert messages[-1] in result.messages, "the latest user message is kept"
    assert all(m in result.messages for m in systems), "every system message is kept"
    _check_tool_pairs([m for m in result.messages if not is_summary(m)])
    if pinned <= target:
        assert monitor.messages_tokens(result.messages) <= target
        assert not result.note
    else:
        assert "over the target" in result.note
    if result.dropped and pinned <= target - 50:
        summary = next(m for m in result.messages if is_summary(m))
        assert summary["content"].startswith(f"{SUMMARY_PREFIX} {len(result.dropped)} earlier message(s)")


def test_nothing_dropped_when_it_fits():
    monitor = ContextMonitor("gpt-4o", 10_000, trigger_threshold=0.75, target_ratio=0.4)
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    result = asyncio.run(compress(messages, monitor, target_tokens=monitor.target_tokens))
    assert result.messages == messages and not result.dropped and not result.shortened


def test_previous_summary_is_folded_into_the_new_one():
    monitor = ContextMonitor("gpt-4o", 400, trigger_threshold=0.75, target_ratio=0.4)
    old_summary = {
        "role": "system",
        "content": f"{SUMMARY_PREFIX} 3 earlier message(s) were compressed:\nthe code is 7781",
    }
    messages = [
        {"role": "system", "content": "You are helpful."},
        old_summary,
        *[
            {"role": "user" if i % 2 else "assistant", "content": f"filler number {i} " * 12}
            for i in range(12)
        ],
        {"role": "user", "content": "What was the code?"},
    ]
    result = asyncio.run(compress(messages, monitor, target_tokens=monitor.target_tokens))
    summaries = [m for m in result.messages if is_summary(m)]
    assert len(summaries) == 1 and "7781" in summaries[0]["content"]


def test_summariser_used_and_its_failure_falls_back():
    monitor = ContextMonitor("gpt-4o", 400, trigger_threshold=0.75, target_ratio=0.4)
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"talk {i} " * 20} for i in range(10)]

    async def good(dropped, previous, budget):  # type: ignore[no-untyped-def]
        return f"LLM summary of {len(dropped)} messages"

    async def broken(dropped, previous, budget):  # type: ignore[no-untyped-def]
        raise RuntimeError("provider down")

    with_llm = asyncio.run(compress(messages, monitor, target_tokens=160, summarize=good))
    assert "LLM summary of" in with_llm.summary
    fallback = asyncio.run(compress(messages, monitor, target_tokens=160, summarize=broken))
    assert fallback.summary.startswith("- ")


def test_extractive_summary_names_roles_and_tools():
    text = extractive_summary(
        [
            {"role": "user", "content": "find the file"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "1", "function": {"name": "read_file"}}],
            },
        ],
        previous="before that, we met",
    )
    assert text.splitlines() == [
        "(earlier) before that, we met",
        "- user: find the file",
        "- assistant:  [called: read_file]",
    ]

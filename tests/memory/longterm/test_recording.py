import json

import pytest

from massgen_cli.config.memory import RecordingConfig
from massgen_cli.memory.longterm.record.rules import messages_to_record


def call(call_id: str, name: str, **arguments):  # type: ignore[no-untyped-def]
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


SPAN = [
    {"role": "system", "content": "You are agent A."},
    {"role": "user", "content": "Find the bug."},
    {
        "role": "assistant",
        "content": "Looking at files.",
        "tool_calls": [
            call("1", "mcp__fs__read_file", path="io.py"),
            call("2", "mcp__fs__read_file", path="x.py"),
        ],
    },
    {"role": "tool", "tool_call_id": "1", "content": "def read(): ..." * 50},
    {"role": "tool", "tool_call_id": "2", "content": "pass"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("3", "new_answer", content="The bug is in io.py.")],
    },
    {"role": "tool", "tool_call_id": "3", "content": "Answer recorded."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("4", "vote", agent_id="agent1", reason="best")],
    },
]


REASONING = "The stack trace points at io."


def contents(settings: RecordingConfig) -> list[str]:
    return [m["content"] for m in messages_to_record(SPAN, settings, reasoning=REASONING)]


def test_defaults_record_user_and_answers_only():
    assert contents(RecordingConfig()) == ["Find the bug.", "Looking at files.", "The bug is in io.py."]


def test_reasoning_when_asked():
    assert "[Reasoning] The stack trace points at io." in contents(RecordingConfig(record_reasoning=True))


def test_aggregate_mcp_summary_counts_sizes_and_first_lines():
    recorded = contents(RecordingConfig(record_all_tool_calls=True))
    assert recorded[-1].splitlines() == [
        "[MCP tools used: mcp__fs__read_file ×2]",
        '- mcp__fs__read_file({"path": "io.py"}) → 750 chars: ' + ("def read(): ..." * 50)[:120],
        '- mcp__fs__read_file({"path": "x.py"}) → 4 chars: pass',
    ]
    assert not any("vote" in text or "Answer recorded" in text for text in recorded)


def test_none_keeps_mcp_calls_out_while_other_tools_are_recorded_each():
    span = [
        *SPAN[:2],
        {"role": "assistant", "content": None, "tool_calls": [call("9", "execute_command", command="make")]},
        {"role": "tool", "tool_call_id": "9", "content": "exit code: 0"},
        *SPAN[2:],
    ]
    settings = RecordingConfig(record_all_tool_calls=True, mcp_summarization="none")
    recorded = [m["content"] for m in messages_to_record(span, settings)]
    assert '[Tool call] execute_command({"command": "make"})' in recorded
    assert "[Tool result] execute_command: exit code: 0" in recorded
    assert not any("mcp__" in text for text in recorded)
    assert not any("execute_command" in text for text in contents(RecordingConfig(include_mcp_tools=True)))


def test_file_reads_are_recorded_compactly_by_default():
    span = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("5", "read_file", path="app/settings.py")],
        },
        {
            "role": "tool",
            "tool_call_id": "5",
            "content": "app/settings.py: lines 1-2 of 2\n     1\tPORT = 8123\n     2\tDEBUG = False",
        },
        {"role": "assistant", "content": None, "tool_calls": [call("6", "read_file", path="gone.py")]},
        {"role": "tool", "tool_call_id": "6", "content": "Error: gone.py does not exist"},
    ]
    recorded = [m["content"] for m in messages_to_record(span, RecordingConfig())]
    assert recorded == ["read app/settings.py: PORT = 8123\nDEBUG = False"]
    assert messages_to_record(span, RecordingConfig(record_file_reads=False)) == []


def test_each_call_with_argument_limit():
    settings = RecordingConfig(include_mcp_tools=True, mcp_summarization="each", tool_argument_limit=20)
    recorded = contents(settings)
    assert '[Tool call] mcp__fs__read_file({"path": "io.py"})' in recorded
    result = next(text for text in recorded if text.startswith("[Tool result] mcp__fs__read_file: def"))
    assert len(result) <= len("[Tool result] mcp__fs__read_file: ") + 20


def test_massgen_key_name_is_accepted():
    assert RecordingConfig.model_validate({"record_tool_calls": True}).record_all_tool_calls


@pytest.mark.parametrize("words", [0, 1, 199, 200, 201, 220, 381, 1_000, 4_321])
@pytest.mark.parametrize("windows", [1, 2, 7])
def test_a_long_text_in_pieces_makes_the_same_chunks_and_counts_them_without_making_them(words, windows):
    """An import splits a long line into pieces of at most ``windows`` chunks; recorded piece by piece
    it must store exactly the chunks the whole line makes, in order."""
    from massgen_cli.memory.longterm.record.memories import chunk_count, chunk_text, text_pieces

    text = "  ".join(f"w{n}" for n in range(words)) + "\n"
    pieces = text_pieces(text, windows)
    assert [chunk for piece in pieces for chunk in chunk_text(piece)] == chunk_text(text)
    assert all(chunk_count(piece) == len(chunk_text(piece)) <= windows for piece in pieces if words > 200)
    assert chunk_count(text) == len(chunk_text(text))

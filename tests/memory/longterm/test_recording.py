import json

from massgen_cli.config.memory import RecordingConfig
from massgen_cli.memory.longterm.rules import messages_to_record


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


def test_aggregate_tool_summary():
    recorded = contents(RecordingConfig(record_all_tool_calls=True))
    assert recorded[-1] == "[Tools used: mcp__fs__read_file (2x)]"
    assert not any("vote" in text or "Answer recorded" in text for text in recorded)


def test_each_call_with_argument_limit():
    settings = RecordingConfig(include_mcp_tools=True, mcp_summarization="each", tool_argument_limit=20)
    recorded = contents(settings)
    assert '[Tool call] mcp__fs__read_file({"path": "io.py"})' in recorded
    result = next(text for text in recorded if text.startswith("[Tool result] mcp__fs__read_file: def"))
    assert len(result) <= len("[Tool result] mcp__fs__read_file: ") + 20


def test_massgen_key_name_is_accepted():
    assert RecordingConfig.model_validate({"record_tool_calls": True}).record_all_tool_calls

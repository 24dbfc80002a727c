from massgen_cli.memory.context.monitor import ContextMonitor
from massgen_cli.memory.context.windows import DEFAULT_CONTEXT_WINDOW, context_window, known_context_window


def test_window_table():
    assert known_context_window("gpt-4.1") == 1_047_576
    assert known_context_window("gpt-4.1-mini") == 1_047_576
    assert known_context_window("gpt-4o-mini") == 128_000
    assert known_context_window("o3") == 200_000
    assert known_context_window("o4-mini") == 200_000
    assert known_context_window("claude-sonnet-4-20250514") == 200_000
    assert known_context_window("gemini-2.5-pro") == 1_048_576
    assert known_context_window("grok-4") == 256_000
    assert known_context_window("meta-llama/llama-3.3-70b") == 131_072
    assert known_context_window("mystery-model") is None


def test_override_and_default():
    assert context_window("gpt-4o", 4096) == 4096
    assert context_window("mystery-model") == DEFAULT_CONTEXT_WINDOW


def test_each_message_is_counted_once():
    monitor = ContextMonitor("gpt-4o", 1000, trigger_threshold=0.75, target_ratio=0.4)
    history = [{"role": "user", "content": f"message {i}"} for i in range(50)]
    for end in range(1, 51):
        monitor.usage(history[:end])
    assert monitor.counted == 50


def test_usage_counts_tool_schemas():
    from massgen_cli.backends.base import ToolSpec

    monitor = ContextMonitor("gpt-4o", 1000, trigger_threshold=0.75, target_ratio=0.4)
    messages = [{"role": "user", "content": "hi"}]
    tool = ToolSpec(
        "vote", "Vote for the best answer.", {"type": "object", "properties": {"x": {"type": "string"}}}
    )
    assert monitor.usage(messages, (tool,)).tokens > monitor.usage(messages).tokens

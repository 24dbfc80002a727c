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


def test_the_upper_bound_is_never_below_the_count():
    monitor = ContextMonitor("gpt-4o", 100_000, trigger_threshold=0.75, target_ratio=0.4)
    messages = [
        {"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": "Größe? 東京 🚀 " * 50},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "x" * 5000},
    ]
    counted = monitor.usage(messages).tokens
    assert monitor.upper_bound(messages) >= counted
    assert monitor.upper_bound(messages) == counted, "messages counted before are bounded by their count"


def test_a_request_far_from_the_trigger_goes_at_once_and_needs_no_encoding(monkeypatch):
    """The first request of a run does not wait for the token encoding, and a run that stays far from
    its window never loads it: a request under half the trigger (by its byte bound) goes at once and is
    reported estimated once it is out; past half the trigger it is counted exactly while the model
    works; over the trigger it is counted before it goes."""
    import asyncio

    from massgen_cli import tokens
    from massgen_cli.backends.base import Request
    from massgen_cli.config.memory import CompressionConfig
    from massgen_cli.events import ContextStatus
    from massgen_cli.memory.context.guard import ContextGuard

    monkeypatch.setattr(tokens, "_LOADED", {})  # this process has loaded no encoding yet
    counts_started: list[object] = []
    in_thread = asyncio.to_thread

    async def to_thread(function, *args):  # type: ignore[no-untyped-def]
        counts_started.append(function)  # the moment a count is handed to a thread
        return await in_thread(function, *args)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)

    async def reported(guard: ContextGuard, request: Request, events: list[object]) -> ContextStatus:
        assert await guard.fit(request) is request
        for _ in range(5):  # the loop runs every ready task: an ungated count would start here
            await asyncio.sleep(0)
        assert not [e for e in events if isinstance(e, ContextStatus)], "nothing reported before it is out"
        guard.sent()
        await asyncio.wait_for(asyncio.gather(*guard._counting), 30)
        [status] = [e for e in events if isinstance(e, ContextStatus)]
        events.clear()
        return status

    async def run() -> None:
        events: list[object] = []
        monitor = ContextMonitor("gpt-4o", 1000, trigger_threshold=0.75, target_ratio=0.4)
        guard = ContextGuard("a", monitor, CompressionConfig(), emit=events.append)
        small = Request([{"role": "user", "content": "What is the capital of France?"}])
        status = await reported(guard, small, events)
        assert status.estimated and status.tokens == monitor.estimate(small.messages).tokens > 0
        assert counts_started == [] and monitor.counted == 0 and not tokens.encoding_ready("gpt-4o")

        halfway = Request([{"role": "user", "content": "word " * 90}])  # bound 470: over 375, under 750
        status = await reported(guard, halfway, events)
        assert not status.estimated and status.tokens == monitor.usage(halfway.messages).tokens
        assert len(counts_started) == 1 and tokens.encoding_ready("gpt-4o")

        large = Request([{"role": "user", "content": "word " * 700}])  # bound over 750: counted first
        await guard.fit(large)
        assert monitor.counted == 2, "the halfway message, then the large one"

    asyncio.run(run())


def test_a_stream_is_counted_once_it_could_be_near_its_budget(monkeypatch):
    """Without the encoding loaded, a response's bytes bound its tokens: short responses are not counted
    (the encoding stays unloaded), one that could be near its budget is counted exactly and warned of."""
    from massgen_cli import tokens
    from massgen_cli.backends.base import Request
    from massgen_cli.config.memory import CompressionConfig
    from massgen_cli.memory.context.guard import ContextGuard

    monkeypatch.setattr(tokens, "_LOADED", {})
    events: list[object] = []
    monitor = ContextMonitor("gpt-4o", 100_000, trigger_threshold=0.75, target_ratio=0.4)
    guard = ContextGuard("a", monitor, CompressionConfig(), emit=events.append, max_output_tokens=50)
    request = Request([{"role": "user", "content": "Tell me a story."}])

    short = guard.stream_budget(request)
    short.add("Once upon a time.", "gpt-4o")
    assert short.used == 0 and guard.check_stream(short) and not tokens.encoding_ready("gpt-4o")

    runaway = guard.stream_budget(request)
    for _ in range(12):
        runaway.add("and then the dragon slept again. ", "gpt-4o")
    assert tokens.encoding_ready("gpt-4o") and runaway.used >= 50 * 0.9
    assert runaway.near and guard.check_stream(runaway)  # warned, and ``warn`` keeps streaming
    assert any("Response near its budget" in getattr(e, "message", "") for e in events)

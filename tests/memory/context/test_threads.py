import asyncio

from massgen_cli.memory.context.conversation import ConversationMemory
from massgen_cli.memory.context.threads import AgentThreads


def test_conversation_memory_basics():
    async def scenario():  # type: ignore[no-untyped-def]
        memory = ConversationMemory()
        first = await memory.add({"role": "user", "content": "hi"}, agent_id="a")
        await memory.add({"role": "assistant", "content": "hello"}, agent_id="b")
        assert memory.size() == 2 and len(first) == 32
        assert memory.messages_now(agent_id="b") == [{"role": "assistant", "content": "hello"}]
        assert memory.messages_now(limit=1) == [{"role": "assistant", "content": "hello"}]
        copy = memory.messages_now()
        copy[0]["content"] = "changed"
        assert memory.messages_now()[0]["content"] == "hi"
        assert memory.items[0].timestamp.endswith("+00:00")
        await memory.clear()
        assert memory.size() == 0

    asyncio.run(scenario())


def test_threads_with_tool_calls_round_trip_through_disk(tmp_path):
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "new_answer", "arguments": '{"content": "x"}'},
    }

    async def scenario():  # type: ignore[no-untyped-def]
        threads = AgentThreads.load(tmp_path)
        await threads.append_message("a", {"role": "user", "content": "question"})
        await threads.append_message("a", {"role": "assistant", "content": None, "tool_calls": [call]})
        await threads.append_message(
            "a",
            {"role": "tool", "content": "Answer recorded.", "tool_call_id": "call_1", "name": "new_answer"},
        )
        await threads.append_message("b", {"role": "user", "content": "question"})
        threads.save()
        return threads.get_history("a")

    written = asyncio.run(scenario())
    loaded = AgentThreads.load(tmp_path)
    assert loaded.get_history("a") == written
    assert loaded.get_history("a")[1] == {"role": "assistant", "content": None, "tool_calls": [call]}
    assert loaded.get_history("a")[2]["tool_call_id"] == "call_1"
    asyncio.run(loaded.clear_history("a"))
    assert loaded.get_history("a") == [] and loaded.get_history("b") == [
        {"role": "user", "content": "question"}
    ]

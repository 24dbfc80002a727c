"""Recording: content is keyed, so the same content twice is one memory with two sources; long text is
stored in chunks; a memory LLM extracts facts, and one that fails is not asked again."""

from __future__ import annotations

import json

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from tests.servers.fake_providers import FakeProviderServer, Reply


def test_same_content_twice_is_one_memory_with_two_sources(store):
    first = store.record(
        [{"role": "user", "content": "The  secret code is 7781."}], RecordContext("a", "s", 1)
    )
    second = store.record(
        [{"role": "user", "content": "the secret code is 7781."}], RecordContext("b", "s", 2)
    )
    assert len(first.added) == 1 and second.added == [] and second.existing == first.added
    [memory] = store.list_memories()
    assert memory.key.startswith("general:general:") and len(memory.key.split(":")[2]) == 16
    assert [(s.agent_id, s.turn) for s in memory.sources] == [("a", 1), ("b", 2)]


def test_long_text_is_chunked(store):
    text = " ".join(f"word{i}" for i in range(450))
    outcome = store.record([{"role": "assistant", "content": text}], RecordContext("a", "s", 1))
    assert len(outcome.added) == 3


def facts_completion(*facts: str) -> dict[str, object]:
    """A whole chat completion whose text is mem0's extraction reply naming ``facts``."""
    found = [{"id": str(i), "text": fact, "attributed_to": "user"} for i, fact in enumerate(facts)]
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "mem-model-x",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": json.dumps({"memory": found})},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def test_memory_llm_is_the_yaml_model(tmp_path):
    server = FakeProviderServer().start()
    server.script(*(Reply(body=facts_completion("User's favourite colour is teal")) for _ in range(3)))
    settings = extracting_with(server)
    store = PersistentMemory(settings, tmp_path, domain="general", task_type="general")
    try:
        outcome = store.record(
            [{"role": "user", "content": "I love teal more than any colour."}], RecordContext("a", "s", 1)
        )
        assert outcome.facts == 1 and not outcome.verbatim
        chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
        assert chat and chat[0].body["model"] == "mem-model-x"
        assert chat[0].body["max_tokens"] > 0, "an OpenAI-compatible server is sent the field it knows"
        [hit] = store.search("favourite colour", limit=3)
        assert hit.text == "User's favourite colour is teal"
        store.record([{"role": "user", "content": "Teal, really."}], RecordContext("b", "s", 1))
        assert len(store.list_memories()) == 1, "the same fact again is a new source, not a new memory"
    finally:
        store.close()
        close_clients()
        server.stop()


def test_the_memory_llm_is_shown_the_words_of_memories_recorded_verbatim(tmp_path):
    """A verbatim record's point holds no text (the index does): mem0's extraction is still shown
    what it said, so it can tell what is known from what is new."""
    server = FakeProviderServer().start()
    server.script(*(Reply(body=facts_completion("Ada lives in Porto now")) for _ in range(3)))
    store = PersistentMemory(extracting_with(server), tmp_path, domain="general", task_type="general")
    try:
        said = "My sister Ada lives in Lisbon."
        store.record([{"role": "user", "content": said}], RecordContext("a", "s", 1), verbatim=True)
        store.record([{"role": "user", "content": "Ada moved to Porto."}], RecordContext("a", "s", 2))
        [asked] = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
        prompt = asked["messages"][-1]["content"]
        known = json.loads(prompt.split("## Existing Memories\n", 1)[1].split("\n\n", 1)[0])
        assert [memory["text"] for memory in known] == [said]
    finally:
        store.close()
        close_clients()
        server.stop()


def test_extraction_by_openai_itself_bounds_its_output_with_max_completion_tokens(tmp_path, monkeypatch):
    """OpenAI's own API (no base_url; here at the address OPENAI_BASE_URL names) has deprecated
    max_tokens, and its reasoning models refuse it: the extraction sends max_completion_tokens."""
    server = FakeProviderServer(stands_for={"/v1/": "openai"}).start()
    server.script(Reply(body=facts_completion("The ferry leaves at 06:40")))
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.root_url}/v1")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)  # mem0 would call OpenRouter instead
    llm = {"provider": "openai", "model": "gpt-4.1-nano", "api_key": "sk-test"}
    settings = PersistentMemoryConfig.model_validate({"enabled": True, "llm": llm})
    store = PersistentMemory(settings, tmp_path, domain="general", task_type="general")
    try:
        outcome = store.record(
            [{"role": "user", "content": "The ferry leaves at 06:40."}], RecordContext("a", "s", 1)
        )
        assert outcome.facts == 1 and not outcome.verbatim, outcome.note
        [asked] = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
        assert asked["max_completion_tokens"] > 0 and "max_tokens" not in asked
    finally:
        store.close()
        close_clients()
        server.stop()


def test_a_memory_llm_that_fails_is_not_asked_again_and_the_words_are_kept(tmp_path):
    server = FakeProviderServer().start()  # nothing scripted: every request fails with a 500
    settings = extracting_with(server)
    store = PersistentMemory(settings, tmp_path, domain="general", task_type="general")
    try:
        first = store.record(
            [{"role": "user", "content": "The ferry leaves at 06:40."}], RecordContext("a", "s", 1)
        )
        assert first.verbatim and len(first.added) == 1
        assert first.note.startswith("the memory LLM failed"), first.note
        asked = len(server.requests)
        assert asked >= 1, "the model was asked"
        second = store.record(
            [{"role": "user", "content": "The pier is number 3."}], RecordContext("a", "s", 2)
        )
        assert second.verbatim and len(second.added) == 1 and second.note == ""
        assert len(server.requests) == asked, "a model that failed is not asked again in this run"
        assert {m.text for m in store.list_memories()} == {
            "The ferry leaves at 06:40.",
            "The pier is number 3.",
        }
    finally:
        store.close()
        close_clients()
        server.stop()


def extracting_with(server: FakeProviderServer) -> PersistentMemoryConfig:
    """Long-term memory whose facts are extracted by the OpenAI-style ``server``."""
    llm = {
        "provider": "openai",
        "model": "mem-model-x",
        "api_key": "sk-test",
        "base_url": f"{server.root_url}/v1",
    }
    return PersistentMemoryConfig.model_validate({"enabled": True, "llm": llm})

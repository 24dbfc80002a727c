"""Memory tools: scripted agents that save, search and forget in real runs, with turn-aware visibility
(a peer's save unseen in its turn, the winner's seen the next, a rejected attempt's never), stale marks
kept for audit, a search kept to the days asked for, and the tools offered only where memory and
``memory.tools`` are on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from massgen_cli.config.memory import MemoryConfig
from massgen_cli.events import ToolCall
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.store.index.stale import StaleMark
from tests.cli.in_process_cli import massgen
from tests.scripted import answer, scripted, vote

MEMORY = {"enabled": True, "persistent_memory": {"enabled": True}}
TOOLS = {"memory_search", "memory_save", "memory_forget"}


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def tool_results(run, agent_id: str, name: str, first_request: int = 0) -> list[str]:  # type: ignore[no-untyped-def]
    """The results of ``agent_id``'s ``name`` calls, in order, as its requests (from ``first_request``
    on) carried them back to the model."""
    found: dict[tuple[str, str], str] = {}
    for request in run.requests(agent_id)[first_request:]:
        for message in request.messages:
            if message.get("role") == "tool" and message.get("name") == name:
                content = str(message["content"])
                found.setdefault((str(message["tool_call_id"]), content), content)
    return list(found.values())


def saved_id(result: str) -> str:
    """The memory id a ``memory_save`` result names (``Saved as KIND memory ID.``)."""
    assert result.startswith("Saved as "), result
    return result.removesuffix(".").split(" memory ", 1)[1].split(" ", 1)[0]


def run_tool(run, agent_id: str, name: str, **arguments: Any):  # type: ignore[no-untyped-def]
    """Call ``agent_id``'s tool through its toolbox, as a step does, between turns."""
    agent = next(a for a in run.app.agents if a.id == agent_id)
    return run.app.runner.run(agent.toolbox.run(ToolCall("direct", name, arguments)))


def offered(run) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    return {agent.id: TOOLS & set(agent.toolbox.tools) for agent in run.app.agents}


def system_texts(run, agent_id: str, first_request: int = 0) -> list[str]:  # type: ignore[no-untyped-def]
    """The system messages (prompt, retrieved memories, shared block) of ``agent_id``'s requests."""
    requests = run.requests(agent_id)[first_request:]
    return [str(m["content"]) for r in requests for m in r.messages if m["role"] == "system"]


def assert_shown_like_any_tool(run) -> None:  # type: ignore[no-untyped-def]
    """a's save and search are in the run's events, the shared block b reads, and b's search in b's thread
    (a thread keeps an agent's decisive step: b searched, then voted)."""
    log = run.app.run_log.directory / "turn_1" / "attempt_1" / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    started = [e for e in events if e["type"] == "ToolStarted" and e["agent_id"] == "a"]
    assert [e["name"] for e in started] == ["memory_save", "memory_search"]
    assert started[0]["arguments"] == {"text": "The vault code is 4711.", "kind": "fact"}
    assert any("Used tools: memory_save ×1, memory_search ×1" in text for text in system_texts(run, "b"))
    thread = run.app.run.threads.get_history("b")
    calls = [c["function"]["name"] for m in thread for c in m.get("tool_calls") or ()]
    assert calls == ["memory_search", "vote"]
    assert any(m["role"] == "tool" and m["content"] == "No memories found." for m in thread)
    dumps = (log.parent / "memory_debug").glob("mem0_add_a_*.json")
    assert any("The vault code is 4711." in path.read_text() for path in dumps), "the save left its dump"


def test_a_peers_save_is_unseen_in_its_turn_and_the_winners_is_seen_the_next(in_process):
    config = scripted(
        {
            "a": [
                call("memory_save", text="The vault code is 4711.", kind="fact"),
                call("memory_search", query="vault code"),
                answer("The vault opens with 4711."),
                vote("agent1", "mine"),
            ],
            "b": [
                vote("agent1", "waits for a's answer", delay=30),  # cancelled when a answers (after its save)
                call("memory_search", query="vault code"),
                vote("agent1", "a knows the code"),
            ],
        },
        memory=MEMORY,
        orchestrator={"final_presentation": "reuse", "shared_memory": {"conversation": True}},
    )
    run = in_process(config, session_id="vault")
    result = run.app.ask("How does the vault open?")
    assert result.winner == "a" and result.memory_errors == []
    assert {spec.name for spec in run.requests("b")[-1].tools} >= TOOLS
    [saved] = tool_results(run, "a", "memory_save")
    memory_id = saved_id(saved)
    [own] = tool_results(run, "a", "memory_search")
    assert f"id {memory_id}" in own and "[a, turn 1] (fact)" in own and "The vault code is 4711." in own
    assert tool_results(run, "b", "memory_search") == ["No memories found."], "a's save leaked to b in turn 1"
    refused = run_tool(run, "b", "memory_forget", id=memory_id, reason="not b's to judge yet")
    assert not refused.ok and "among those you can see" in refused.text
    assert_shown_like_any_tool(run)
    run.app.close()

    script = [call("memory_search", query="vault code"), "It is 4711."]
    later = in_process(scripted({"b": script}, memory=MEMORY), session_id="vault")
    assert later.app.ask("And the vault code?").final_answer == "It is 4711."
    earlier, found = tool_results(later, "b", "memory_search")  # its thread holds its turn-1 search
    assert earlier == "No memories found."
    assert f"id {memory_id}" in found and "[a, turn 1] (fact)" in found, "the winner's save reached b"


def test_a_rejected_attempts_save_is_gone_from_searches(in_process):
    config = scripted(
        {
            "a": [
                call("memory_save", text="The gate opens at noon."),
                answer("noon"),
                vote("agent1", "mine"),
                call("restart_orchestration", reason="wrong", instructions="check again"),
                call("memory_save", text="The gate opens at dawn."),
                answer("dawn"),
                vote("agent1", "mine"),
                call("submit"),
            ],
            "b": [vote("agent1", "ok", delay=0.3)],
        },
        memory=MEMORY,
        orchestrator={"final_presentation": "reuse", "coordination": {"max_orchestration_restarts": 1}},
    )
    run = in_process(config, session_id="gate")
    result = run.app.ask("When does the gate open?")
    assert (result.attempt, result.winner, result.final_answer) == (2, "a", "dawn")
    rejected, kept = (saved_id(text) for text in tool_results(run, "a", "memory_save"))
    assert run.app.run.provided("long-term memory").run.store is not None
    stored = {m.id: m for m in run.app.run.provided("long-term memory").run.store.list_memories()}
    assert stored[rejected].text == "The gate opens at noon.", "attempt 1's save was written"
    assert [s.attempt for s in stored[rejected].sources] == [1] and stored[kept].extra["kind"] == "note"
    run.app.close()

    script = [call("memory_search", query="gate opens"), "At dawn."]
    later = in_process(scripted({"b": script}, memory=MEMORY), session_id="gate")
    later.app.ask("When does the gate open, again?")
    [found] = tool_results(later, "b", "memory_search")
    assert f"id {kept}" in found and "The gate opens at dawn." in found
    assert rejected not in found and "noon" not in found, "a rejected attempt's save was found"


def test_a_forgotten_memory_is_no_longer_found_but_listed_with_its_reason(in_process):
    script = [call("memory_save", text="The ferry leaves at nine.", kind="fact"), "Noted."]
    first = in_process(scripted({"a": script}, memory=MEMORY), session_id="ferry")
    first.app.ask("Remember the ferry time.")
    memory_id = saved_id(tool_results(first, "a", "memory_save")[0])
    first.app.close()

    script = [
        call("memory_search", query="ferry leaves"),
        call("memory_forget", id=memory_id, reason="the timetable changed"),
        call("memory_forget", id=memory_id, reason="said twice"),
        call("memory_search", query="ferry leaves"),
        "Forgotten.",
        "Nothing about the ferry.",
    ]
    run = in_process(scripted({"a": script}, memory=MEMORY), session_id="ferry", interactive=True)
    run.app.ask("Is the ferry time still right?")
    assert any("The ferry leaves at nine." in text for text in system_texts(run, "a")), "retrieved before"
    before, after = tool_results(run, "a", "memory_search")
    assert f"id {memory_id}" in before and memory_id not in after
    marked, again = tool_results(run, "a", "memory_forget")
    assert marked.startswith(f"Marked memory {memory_id} stale")
    assert again == f"Memory {memory_id} was already marked stale by a: the timetable changed"
    turn_three = len(run.requests("a"))
    run.app.ask("When does the ferry leave?")
    blocks = system_texts(run, "a", turn_three)
    assert any(block.startswith("Relevant memories") for block in blocks), "turn 3 retrieved memories"
    assert not any("The ferry leaves at nine." in block for block in blocks), "a stale memory was retrieved"
    run.app.close()

    listed = massgen("memory", "list", "--config", "config.yaml")
    assert listed.exit_code == 0, listed.stderr
    assert "The ferry leaves at nine." not in listed.stdout and "Nothing about the ferry" in listed.stdout
    everything = massgen("memory", "list", "--config", "config.yaml", "--all").stdout.splitlines()
    [line] = [line for line in everything if "The ferry leaves at nine." in line]
    assert line.endswith("[stale: the timetable changed — marked by a, turn 2]")
    records = massgen("memory", "list", "--config", "config.yaml", "--all", "--json").stdout.splitlines()
    [stale] = [record for record in map(json.loads, records) if record["id"] == memory_id]
    assert (stale["stale"]["reason"], stale["stale"]["marked_by"]) == ("the timetable changed", "a")
    assert stale["metadata"]["kind"] == "fact"


def test_stale_memories_leave_every_ranking_unless_asked_for(store):
    context = RecordContext("a", "s", 1)
    [kept] = store.record([{"role": "user", "content": "The lighthouse is painted red."}], context).added
    [old] = store.record([{"role": "user", "content": "The lighthouse is painted blue."}], context).added
    everything = SearchFilter(include_stale=True)
    assert {hit.id for hit in store.search("lighthouse painted", limit=5)} == {kept, old}
    assert store.index.mark_stale(StaleMark(old, "repainted", "a", session_id="s", turn=2))
    assert not store.index.mark_stale(StaleMark(old, "again", "b")), "the first mark stays"
    for method in ("hybrid", "dense", "lexical"):
        assert [hit.id for hit in store.search("lighthouse blue", limit=5, method=method)] == [kept]
        found = store.search("lighthouse blue", limit=5, scope=everything, method=method)
        assert old in {hit.id for hit in found}
    assert [m.id for m in store.list_memories()] == [kept]
    assert [m.id for m in store.list_memories(include_stale=True)] == [kept, old]
    assert store.index.stale_marks()[old].reason == "repainted"
    store.forget([old])
    assert store.index.stale_marks() == {}, "a deleted memory takes its mark with it"


def test_memory_tools_are_offered_only_where_memory_and_the_setting_are_on(in_process):
    assert MemoryConfig().tools is True
    off_for = {"b": {"memory": {"tools": False}}, "c": {"memory": {"persistent_memory": {"enabled": False}}}}
    mixed = in_process(scripted({"a": ["x"], "b": ["x"], "c": ["x"]}, agent_keys=off_for, memory=MEMORY))
    assert offered(mixed) == {"a": TOOLS, "b": set(), "c": set()}
    assert "memory_search finds what you kept" in mixed.app.agents[0].toolbox.instructions()
    mixed.app.close()

    on_for = {"b": {"memory": {"tools": True}}}
    off = in_process(scripted({"a": ["x"], "b": ["x"]}, agent_keys=on_for, memory={**MEMORY, "tools": False}))
    assert offered(off) == {"a": set(), "b": TOOLS}
    off.app.close()


def test_searching_all_sessions_is_offered_only_where_the_config_searches_them(in_process):
    named = {"enabled": True, "persistent_memory": {"enabled": True, "session_name": "kb"}}
    run = in_process(scripted({"a": ["x"]}, memory=named))
    refused = run_tool(run, "a", "memory_search", query="anything", scope="all_sessions")
    assert not refused.ok and "scope must be one of session" in refused.text
    run.app.close()

    everywhere = {"enabled": True, "persistent_memory": {"enabled": True, "session_name": None}}
    wide = in_process(scripted({"a": ["x"]}, memory=everywhere))
    [spec] = [agent.toolbox.tools["memory_search"].spec for agent in wide.app.agents]
    assert spec.parameters["properties"]["scope"]["enum"] == ["session", "all_sessions"]
    assert run_tool(wide, "a", "memory_search", query="anything", scope="all_sessions").ok


def test_a_search_keeps_to_the_days_it_is_given(in_process):
    run = in_process(scripted({"a": ["x"]}, memory=MEMORY))
    assert run_tool(run, "a", "memory_save", text="The boat leaves at noon.").ok
    today = datetime.now(UTC).date()  # memories are dated in UTC
    tomorrow = (today + timedelta(days=1)).isoformat()
    found = run_tool(run, "a", "memory_search", query="boat", since="yesterday")
    assert found.ok and "The boat leaves at noon." in found.text, "dated today, after yesterday"
    assert "The boat leaves at noon." in run_tool(run, "a", "memory_search", query="boat", until="today").text
    later = run_tool(run, "a", "memory_search", query="boat", since=tomorrow)
    assert later.ok and later.text == "No memories found."
    refused = run_tool(run, "a", "memory_search", query="boat", until="someday")
    assert not refused.ok and "argument 'until' names no date" in refused.text
    run.app.close()

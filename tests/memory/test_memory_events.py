"""The memory a run used is in its events: each long-term lookup (``MemoryRetrieved``, with why it was made
and each injected memory's text, score, owner, session and turn) and each recording (``MemoryRecorded``,
with the memories' keys and texts), in real scripted runs with the offline embedder; shown on the console
only with --debug."""

from __future__ import annotations

import io
import json
import re
from typing import Any

from rich.console import Console

from massgen_cli.events import MemoryRecorded, MemoryRetrieved, RecordedMemory, RetrievedMemory
from massgen_cli.ui import ConsoleView
from tests.scripted import answer, scripted, vote

MEMORY = {"enabled": True, "persistent_memory": {"enabled": True}}
BRASS_KEY = "alpha: the vault opens with the brass key"
KEY = re.compile(r"^general:general:[0-9a-f]{16}$")


def two_agents(memory: dict[str, Any]) -> str:
    """a answers and wins each turn; b, working when a answers, is cut off and starts again."""
    return scripted(
        {
            # a answers at once in each turn, then votes for its answer
            "a": [
                answer(BRASS_KEY),
                vote("agent1", "mine"),
                answer("alpha two: a code now"),
                vote("agent1", "mine"),
            ],
            # b's first step of each turn is still running when a answers: it is cut off and starts again
            "b": [
                vote("agent1", "x", delay=30),
                vote("agent1", "clear"),
                vote("agent1", "x", delay=30),
                vote("agent1", "ok"),
            ],
        },
        orchestrator={"final_presentation": "reuse"},
        memory=memory,
    )


TWO_AGENTS = two_agents(MEMORY)

LONG_ANSWER = " ".join(f"fact{i} is remembered here" for i in range(40))


def events(run, turn: int, kind: str | None = None) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The events of ``turn``'s first attempt in the run's log (of type ``kind`` when given)."""
    path = run.app.run_log.directory / f"turn_{turn}" / "attempt_1" / "events.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()]
    return [event for event in found if kind is None or event["type"] == kind]


def lookups(run, turn: int, agent_id: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return [e for e in events(run, turn, "MemoryRetrieved") if e["agent_id"] == agent_id]


def test_a_memory_recorded_in_turn_one_is_in_the_retrieval_event_of_turn_two(in_process):
    run = in_process(TWO_AGENTS, interactive=True)
    assert run.app.ask("How does the vault open?").winner == "a"
    first = lookups(run, 1, "a")[0]  # a is never cut off: its first lookup is the turn's
    assert first["reason"] == "turn_start" and first["query"] == "How does the vault open?"
    assert first["memories"] == [], "nothing is visible yet: the event is there with no memories"
    recorded = [r for e in events(run, 1, "MemoryRecorded") if e["agent_id"] == "a" for r in e["records"]]
    brass = next(r for r in recorded if r["text"] == BRASS_KEY)
    assert brass["new"] and KEY.match(brass["key"])
    assert any(r["memory_id"] == brass["memory_id"] and not r["new"] for r in recorded), (
        "the winner's final answer (the same text) became another source of the same memory"
    )

    assert run.app.ask("And how does the vault open now?").winner == "a"
    turn_start = lookups(run, 2, "a")[0]
    assert turn_start["reason"] == "turn_start"
    assert turn_start["query"].startswith("And how does the vault open now?")
    [memory] = [m for m in turn_start["memories"] if m["text"] == BRASS_KEY]
    assert memory["id"] == brass["memory_id"]
    assert (memory["owner"], memory["session_id"], memory["turn"]) == ("a", run.app.session.id, 1)
    assert 0 < memory["score"] <= 1 and memory["score"] == round(memory["score"], 4)
    # b (cut off by a's answer before or after its first lookup) is shown the turn-1 winner's memory as a's
    attributed = [(m["id"], m["owner"], m["turn"]) for e in lookups(run, 2, "b") for m in e["memories"]]
    assert (brass["memory_id"], "a", 1) in attributed
    request = next(
        r for r in run.requests("b") if any("Relevant memories:" in str(m["content"]) for m in r.messages)
    )
    assert any(f"[From a Turn 1] {BRASS_KEY}" in str(m["content"]) for m in request.messages), (
        "the event names the memory the request carried"
    )


def test_an_agent_restart_looks_memory_up_again_for_the_reason_after_restart(in_process):
    run = in_process(TWO_AGENTS, interactive=True)
    run.app.ask("How does the vault open?")
    b_events = [e for e in events(run, 1) if "b" in (e.get("agent_id"), e.get("voter"))]
    said = [
        {"MemoryRetrieved": e.get("reason"), "AgentStatus": e.get("status"), "VoteCast": "voted"}[e["type"]]
        for e in b_events
        if e["type"] in ("MemoryRetrieved", "AgentStatus", "VoteCast")
    ]
    restarted = said.index("restarted")
    # its first lookup is logged only if it finished before a's answer cut the step off
    assert said[:restarted] in (["working", "turn_start"], ["working"])
    assert said[restarted:] == ["restarted", "working", "after_restart", "voted"]


def test_without_exclude_recent_every_step_looks_memory_up(in_process):
    every_step = two_agents({**MEMORY, "retrieval": {"exclude_recent": False}})
    run = in_process(every_step, interactive=True)
    run.app.ask("How does the vault open?")
    assert [e["reason"] for e in lookups(run, 1, "a")] == ["turn_start", "step"], "a answered, then voted"


def test_a_compression_looks_memory_up_again_and_finds_what_it_dropped(in_process):
    run = in_process(
        f"""
        agent:
          id: solo
          context_window: 1500
          backend: {{type: scripted, responses: ["{LONG_ANSWER}"]}}
        memory:
          enabled: true
          persistent_memory: {{enabled: true}}
        """,
        interactive=True,
    )
    for turn in range(1, 9):
        run.app.ask(f"Question {turn}: tell me everything about topic {turn} again please.")
        seen = events(run, turn)
        if any("Context compressed" in e.get("message", "") for e in seen):
            break
    else:
        raise AssertionError("no compression in 8 turns of a 1,500-token window")
    compressed = next(i for i, e in enumerate(seen) if "Context compressed" in e.get("message", ""))
    looked_up = [(i, e) for i, e in enumerate(seen) if e["type"] == "MemoryRetrieved"]
    assert [(e["reason"], i > compressed) for i, e in looked_up] == [
        ("turn_start", False),
        ("after_compression", True),
    ]
    after = looked_up[-1][1]
    cut = LONG_ANSWER[:499] + "…"  # the event carries 500 characters of a memory
    assert any(m["text"] == cut and m["turn"] < turn for m in after["memories"]), after["memories"]


def test_memory_save_is_a_memory_recorded_event(in_process):
    run = in_process(
        """
        agent:
          id: solo
          backend:
            type: scripted
            responses:
              - {tool: memory_save, args: {text: "The vault code is 4711.", kind: fact}}
              - "Noted."
        memory:
          enabled: true
          tools: true
          persistent_memory: {enabled: true}
        """
    )
    assert run.app.ask("Remember the vault code 4711.").final_answer == "Noted."
    [saved] = [e for e in events(run, 1, "ToolFinished") if e["name"] == "memory_save"]
    recorded = [r for e in events(run, 1, "MemoryRecorded") for r in e["records"]]
    [record] = [r for r in recorded if r["text"] == "The vault code is 4711."]
    assert record["new"] and KEY.match(record["key"]) and record["memory_id"] in saved["summary"]


def test_memory_events_are_bounded_and_shown_on_the_console_only_with_debug():
    memory = RetrievedMemory("m1", "word " * 300, 0.91234, "a", "s1", 2)
    retrieved = MemoryRetrieved("b", "after_restart", "q" * 1000, [memory])
    recorded = MemoryRecorded(
        "a", [RecordedMemory("m1", "general:general:0123456789abcdef", "x" * 900, True)]
    )
    assert len(retrieved.query) == 300 and len(memory.text) == 500 and memory.text.endswith("…")
    assert len(recorded.records[0].text) == 500
    shown = {}
    for debug in (False, True):
        err = io.StringIO()
        view = ConsoleView(["a", "b"], console=Console(file=err, width=200), out=io.StringIO(), debug=debug)
        view(retrieved)
        view(recorded)
        shown[debug] = err.getvalue()
    assert shown[False] == ""
    assert "✅ Total: 1 memories retrieved for b (after_restart)" in shown[True]
    assert "[From a Turn 2] 0.9123 word word" in shown[True]
    assert "✅ [recorded] a: 1 memories (1 new)" in shown[True]


def test_a_restart_during_a_lookup_is_the_next_lookups_reason_and_it_looks_again():
    """Under load a restart can come while the turn's first lookup still runs in its thread: that lookup
    is still ``turn_start`` (it was said as ``after_restart``, and the next step reused its block instead
    of looking again)."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from massgen_cli.attempts import AttemptAt
    from massgen_cli.config.memory import MemoryConfig
    from massgen_cli.memory.runtime.recall import Recall

    searching, release, said = threading.Event(), threading.Event(), []

    def search(*_: object, **__: object) -> list[object]:
        searching.set()
        assert release.wait(30), "the test releases the search"
        return []

    run = SimpleNamespace(
        settings={"b": MemoryConfig(enabled=True)},
        enabled_for=lambda agent_id: True,
        store=SimpleNamespace(search=search),
        traces=None,
        session_id="s",
        at=AttemptAt(1),
        emit=said.append,
        failed=lambda message: said.append(message),
    )
    recall = Recall(run)  # type: ignore[arg-type]

    async def scenario() -> None:
        first = asyncio.create_task(recall.block("b", "How does the vault open?", []))
        await asyncio.to_thread(searching.wait, 30)
        recall.refresh("b", "after_restart")  # a's answer cut b's step off while it looked
        release.set()
        await first
        await recall.block("b", "How does the vault open?", [])

    asyncio.run(scenario())
    assert [event.reason for event in said if isinstance(event, MemoryRetrieved)] == [
        "turn_start",
        "after_restart",
    ]

"""Orchestrator shared memory, scoped entries, slots and lifetimes."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml

from massgen_cli.agent_builder import build_agents
from massgen_cli.config import load_document
from massgen_cli.config.memory import LifecycleConfig, PersistentMemoryConfig
from massgen_cli.coordination.orchestrator import Orchestrator
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import AttemptScope, StepContext
from massgen_cli.features.shared_block import SharedBlock
from massgen_cli.memory.context.conversation import ConversationMemory
from massgen_cli.memory.longterm.record.memories import RecordContext
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.longterm.store.vector_stores import close_clients
from massgen_cli.memory.shared.block import CONVERSATION_HEADER, PERSISTENT_HEADER
from massgen_cli.memory.shared.entries import SharedEntries
from massgen_cli.memory.shared.memory import SharedMemory, SharedStores
from tests.conftest import wait_until

AGENTS = """
agents:
  - id: a
    system_message: You are A.
    backend:
      type: scripted
      responses:
        - {tool: new_answer, args: {content: "Answer from a about rivers"}}
        - {tool: vote, args: {agent_id: agent1, reason: "mine is fine"}}
  - id: b
    backend:
      type: scripted
      responses: [{tool: vote, args: {agent_id: agent1, reason: "good rivers answer"}, delay: 0.2}]
orchestrator:
  final_presentation: reuse
  shared_memory: {window: 10}
"""


def agents_and_config(tmp_path, text=AGENTS):  # type: ignore[no-untyped-def]
    config = load_document(yaml.safe_load(text), tmp_path / "c.yaml").config
    return build_agents(config, lambda event: None), config


def persistent_orchestrator(agents, config, store):  # type: ignore[no-untyped-def]
    shared = SharedMemory(config.orchestrator.shared_memory, SharedStores(persistent=store), session_id="s")
    return Orchestrator(agents, CoordinationPolicy.of(config), context=shared_context(shared)), shared


def shared_context(shared: SharedMemory) -> StepContext:
    return StepContext(extensions=(SharedBlock(shared),))


@pytest.mark.parametrize("conversation", [False, True])
@pytest.mark.parametrize("persistent", [False, True])
def test_injection_and_recording_in_every_combination(tmp_path, store, conversation, persistent):
    agents, config = agents_and_config(tmp_path)
    shared_conversation = ConversationMemory() if conversation else None
    if persistent:
        store.record(
            [{"role": "assistant", "content": "Rivers flow to the sea."}], RecordContext("b", "s", 1)
        )
        store.record_winner("s", 1, "b")
    shared = SharedMemory(
        config.orchestrator.shared_memory,
        SharedStores(conversation=shared_conversation, persistent=store if persistent else None),
        session_id="s",
    )
    orchestrator = Orchestrator(
        agents,
        CoordinationPolicy.of(config),
        context=shared_context(shared),
        scope=AttemptScope(session_id="s", turn=2),
    )
    result = asyncio.run(orchestrator.run("Tell me about rivers"))
    assert result.winner == "a"
    requests = agents[1].backend.inner.requests  # type: ignore[attr-defined]
    last = requests[-1].messages
    assert last[0]["role"] == "system" and "several agents" in last[0]["content"]
    block = last[1]["content"] if last[1]["role"] == "system" else ""
    assert (CONVERSATION_HEADER in block) == conversation
    assert (PERSISTENT_HEADER in block) == persistent
    if not conversation and not persistent:
        assert [m["role"] for m in last] == ["system", "user"], "messages unchanged without shared memory"
    if conversation:
        assert "[a]: Answer from a about rivers" in block
        items = shared_conversation.items  # type: ignore[union-attr]
        assert [(i.agent_id, i.message["content"]) for i in items] == [
            ("a", "Answer from a about rivers"),
            ("a", "Voted for a: mine is fine"),
            ("b", "Voted for a: good rivers answer"),
        ]
        assert all(i.timestamp and i.message["role"] == "assistant" for i in items)
    if persistent:
        assert "[From b Turn 1] Rivers flow to the sea." in block
        recorded = {m.text for m in store.list_memories(session_id="s")}
        assert "Answer from a about rivers" in recorded and "Voted for a: good rivers answer" in recorded


def test_window_keeps_recent_and_relevant(tmp_path):
    agents, config = agents_and_config(tmp_path, AGENTS.replace("window: 10", "window: 2"))
    conversation = ConversationMemory()
    for agent, text in [
        ("x", "bananas are yellow"),
        ("y", "rivers are long"),
        ("z", "trains are fast"),
        ("w", "cats sleep"),
    ]:
        conversation.add_now({"role": "assistant", "content": text}, agent_id=agent)
    stores = SharedStores(conversation=conversation)
    shared = SharedMemory(config.orchestrator.shared_memory, stores, session_id="s")
    orchestrator = Orchestrator(agents, CoordinationPolicy.of(config), context=shared_context(shared))
    asyncio.run(orchestrator.run("Which rivers are long?"))
    first_request = agents[1].backend.inner.requests[0].messages  # type: ignore[attr-defined]
    block = first_request[1]["content"].splitlines()
    assert block == [CONVERSATION_HEADER, "[y]: rivers are long", "[w]: cats sleep"]


def test_failing_shared_memory_never_stops_the_turn(tmp_path, store):
    agents, config = agents_and_config(tmp_path)

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("store offline")

    store.search = broken  # type: ignore[method-assign]
    orchestrator, shared = persistent_orchestrator(agents, config, store)
    result = asyncio.run(orchestrator.run("Q?"))
    assert result.winner == "a"
    assert any("store offline" in error for error in shared.take_errors())
    assert agents[1].backend.inner.requests[0].messages[-1]["role"] == "user"  # type: ignore[attr-defined]


def test_a_store_that_cannot_record_is_tolerated(tmp_path, store):
    agents, config = agents_and_config(tmp_path)

    def read_only(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    store.record = read_only  # type: ignore[method-assign]
    orchestrator, shared = persistent_orchestrator(agents, config, store)
    assert asyncio.run(orchestrator.run("Q?")).winner == "a"
    assert shared.take_errors() == []


def test_entries_override_expire_and_roll_back(tmp_path):
    entries = SharedEntries(path=tmp_path / "shared.json")
    entries.add("plan", "first plan", "conversation", "a", 1, 1)
    entries.add("plan", "better plan", "conversation", "a", 1, 1)
    entries.add("plan", "b's plan", "conversation", "b", 1, 1)
    entries.add("note", "only this turn", "round", "a", 1, 1)
    assert [e.content for e in entries.in_effect(1, "plan")] == ["better plan", "b's plan"]
    assert [e.content for e in entries.in_effect(1, "note")] == ["only this turn"]
    assert entries.in_effect(2, "note") == [], "round scope lasts one turn"
    entries.add("plan", "turn-2 attempt-1 plan", "conversation", "a", 2, 1)
    assert "turn-2 attempt-1 plan" in [e.content for e in entries.in_effect(2, "plan")]
    entries.roll_back(2, attempt=1)
    assert [e.content for e in entries.in_effect(2, "plan")] == ["better plan", "b's plan"], (
        "the replaced entry is back"
    )
    entries.add("slot:city", "Paris", "conversation", "a", 2, 2)
    entries.add("slot:city", "Lyon", "conversation", "b", 2, 2)
    assert entries.slots(2) == {"city": "Lyon"}
    entries.save()
    assert SharedEntries.load(tmp_path).slots(3) == {"city": "Lyon"}


def test_expired_entries_and_records_are_never_returned(tmp_path):
    entries = SharedEntries(LifecycleConfig(session_ttl_seconds=0, working_ttl_seconds=0))
    entries.add("plan", "stale", "conversation", "a", 1, 1)
    assert entries.in_effect(1) == []
    store = PersistentMemory(
        PersistentMemoryConfig(enabled=True),
        tmp_path,
        domain="g",
        task_type="g",
        lifecycle=LifecycleConfig(episodic_ttl_seconds=0),
    )
    try:
        store.record(
            [{"role": "user", "content": "a fleeting thought about kites"}], RecordContext("a", "s", 1)
        )
        assert store.search("kites", limit=5) == []
        assert store.search("kites", limit=5, scope=SearchFilter(viewer=Viewer("a", "s", 2))) == []
        store.record(
            [{"role": "user", "content": "kites are imported knowledge"}],
            RecordContext("a", "s", 1, level="semantic"),
        )
        assert [h.text for h in store.search("kites", limit=5)] == ["kites are imported knowledge"]
    finally:
        store.close()
        close_clients()


ENTRIES = """
        orchestrator:
          final_presentation: reuse
          shared_memory: {entries: true}
          coordination: {max_orchestration_restarts: 1}
"""


def first_attempt_requests(run, agent_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The requests ``agent_id`` sent in turn 1's first attempt, as logged (a rejected attempt's too)."""
    folder = run.app.run_log.directory / "turn_1" / "attempt_1" / "requests"
    return [path.read_text() for path in sorted(folder.glob(f"{agent_id}_*.json"))]


def test_entries_of_a_restarted_attempt_are_rolled_back(in_process):
    run = in_process(
        """
        agents:
          - id: a
            backend:
              type: scripted
              responses:
                - {tool: share_memory, args: {type: plan, content: "attempt one plan", scope: conversation}}
                - {tool: new_answer, args: {content: "first try"}}
                - {tool: vote, args: {agent_id: agent1, reason: "mine"}}
                - {tool: restart_orchestration, args: {reason: "weak", instructions: "again"}}
                - {tool: new_answer, args: {content: "second try"}}
                - {tool: vote, args: {agent_id: agent1, reason: "mine"}}
                - {tool: submit, args: {}}
          - id: b
            backend:
              type: scripted
              responses: [{tool: vote, args: {agent_id: agent1, reason: "ok"}, delay: 0.3}]
        """
        + ENTRIES
    )
    result = run.app.ask("Q?")
    assert result.attempt == 2 and result.final_answer == "second try"
    seen = first_attempt_requests(run, "b")
    assert any("attempt one plan" in text for text in seen), "attempt 1 shared the plan before rollback"
    entries = run.app.run.provided("shared memory").entries
    assert entries.in_effect(1, "plan") == []
    assert [e.content.split(": ", 1)[1] for e in entries.in_effect(2, "winning_answer")] == ["second try"]
    saved = json.loads((run.app.session.directory / "shared.json").read_text())
    assert {e["type"] for e in saved} == {"winning_answer", "vote_result"}


def test_entries_of_a_cancelled_turn_are_rolled_back(in_process):
    run = in_process(
        """
        agents:
          - id: a
            backend:
              type: scripted
              responses:
                - {tool: share_memory, args: {type: plan, content: "never finished", scope: conversation}}
                - {text: "slow", delay: 30}
          - id: b
            backend: {type: scripted, responses: [{text: "slow", delay: 30}]}
        """
        + ENTRIES
    )

    async def cancel_once_shared() -> None:
        turn = asyncio.create_task(run.app.run.turns.run("Q?"))
        await asyncio.to_thread(wait_until, lambda: len(run.requests("a")) == 2)  # shared, then slow
        assert [entry.content for entry in run.app.run.provided("shared memory").entries.entries] == [
            "never finished"
        ]
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn

    run.app.runner.run(cancel_once_shared())
    assert run.app.run.provided("shared memory").entries.entries == []
    assert run.app.session.next_turn == 2, "a cancelled turn keeps its number"


def test_slots_persist_across_a_continued_session_and_reach_the_next_turn(tmp_path):
    from tests.conftest import run_cli, write_config

    config = write_config(
        tmp_path,
        """
        agents:
          - id: a
            backend:
              type: scripted
              responses:
                - tool: share_memory
                  args: {type: "slot:destination", content: "Kyoto", scope: conversation}
                - {tool: new_answer, args: {content: "Booked Kyoto."}}
                - {tool: vote, args: {agent_id: agent1, reason: "done"}}
          - id: b
            backend:
              type: scripted
              responses: [{tool: vote, args: {agent_id: agent1, reason: "ok"}, delay: 0.3}]
        orchestrator:
          final_presentation: reuse
          shared_memory: {entries: true}
        """,
    )
    first = run_cli("--config", str(config), "--session", "trip", "Plan a trip")
    assert first.returncode == 0, first.stderr
    second = run_cli("--config", str(config), "--session", "trip", "Where am I going?")
    assert second.returncode == 0, second.stderr
    import os
    from pathlib import Path

    logs = sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir())
    request = json.loads((logs[-1] / "turn_2" / "attempt_1" / "requests" / "b_001.json").read_text())
    block = request["messages"][1]["content"]
    assert "=== SESSION SLOTS ===\ndestination: Kyoto" in block
    assert "active agent: a (last winner)" in block
    assert "[orchestrator] winning_answer (conversation): a: Booked Kyoto." in block


def test_shared_conversation_of_a_rejected_attempt_is_rolled_back(in_process):
    run = in_process(
        """
        agents:
          - id: a
            backend:
              type: scripted
              responses:
                - {tool: new_answer, args: {content: "first try"}}
                - {tool: vote, args: {agent_id: agent1, reason: "mine"}}
                - {tool: restart_orchestration, args: {reason: "weak", instructions: "again"}}
                - {tool: new_answer, args: {content: "second try"}}
                - {tool: vote, args: {agent_id: agent1, reason: "mine"}}
                - {tool: submit, args: {}}
          - id: b
            backend:
              type: scripted
              responses: [{tool: vote, args: {agent_id: agent1, reason: "ok"}, delay: 0.3}]
        orchestrator:
          final_presentation: reuse
          shared_memory: {conversation: true}
          coordination: {max_orchestration_restarts: 1}
        """
    )
    assert run.app.ask("Q?").final_answer == "second try"
    seen = first_attempt_requests(run, "b")
    assert any("SHARED CONVERSATION" in t and "first try" in t for t in seen), "shared before the rollback"
    contents = [item.message["content"] for item in run.app.run.provided("shared memory").conversation.items]
    assert "first try" not in contents and "second try" in contents

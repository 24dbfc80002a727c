"""Long-term memory inside real turns: turn-aware sharing, sessions across processes, failures."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from massgen_cli.config import load_config
from massgen_cli.memory.runtime.opening import searches_all_sessions
from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli, write_config

MEMORY = """
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def team_turn(a: str, b: str, c: str) -> str:
    """Three scripted agents that each answer once, then vote for a's answer (agent1) as often as they
    are asked again; peer updates deferred, so no step is cut short and each takes one response."""

    def agent(name: str, answer: str) -> str:
        vote = '{tool: vote, args: {agent_id: agent1, reason: "x"}}'
        votes = "".join(f"        - {vote}\n" for _ in range(6))
        return (
            f"  - id: {name}\n    backend:\n      type: scripted\n      responses:\n"
            f'        - {{tool: new_answer, args: {{content: "{answer}"}}}}\n{votes}'
        )

    agents = agent("a", a) + agent("b", b) + agent("c", c)
    return f"agents:\n{agents}orchestrator: {{final_presentation: reuse, peer_updates: defer}}\n{MEMORY}"


TURN_ONE = team_turn(
    "alpha: the vault opens with the brass key",
    "beta: the vault opens with a silver key",
    "gamma: the vault stays shut",
)
TURN_TWO = team_turn(
    "alpha two: the vault now opens with a code", "beta two: a new lock", "gamma two: no idea"
)


def memory_blocks(requests) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        m["content"]
        for r in requests
        for m in r.messages
        if str(m.get("content", "")).startswith("Relevant memories:")
    ]


def test_turn_one_winner_reaches_others_in_turn_two_but_not_losers_or_current_work(in_process):
    """Each turn's agents are scripted for that turn (the second continues the first's session), so what
    a turn's agents say does not depend on how fast the other turn's went."""
    run = in_process(TURN_ONE, interactive=True)
    first = run.app.ask("How does the vault open?")
    assert (first.winner, first.answers["b"]) == ("a", "beta: the vault opens with a silver key")
    turn_one_log = run.app.run_log.directory
    run.app.close()
    again = in_process(TURN_TWO, session_id=first.session_id, interactive=True)
    second = again.app.ask("And how does the vault open now?")
    assert (second.turn, second.winner, second.memory_errors) == (2, "a", [])
    blocks = memory_blocks(again.requests("c"))
    assert blocks, "c retrieved long-term memory in turn 2"
    assert all("[From a Turn 1] alpha: the vault opens with the brass key" in block for block in blocks)
    assert not any("silver key" in block for block in blocks), "a turn-1 loser's record leaked"
    assert not any("alpha two" in block for block in blocks), "the winner's turn-2 work leaked"
    dumps = sorted((turn_one_log / "turn_1" / "attempt_1" / "memory_debug").glob("mem0_add_*.json"))
    assert {json.loads(p.read_text())["agent_id"] for p in dumps} == {"a", "b", "c"}
    dump = json.loads(dumps[0].read_text())
    assert set(dump) == {"timestamp", "agent_id", "session_id", "metadata", "messages"}
    assert dump["metadata"]["turn"] == 1 and dump["session_id"] == first.session_id


def test_session_name_carries_memories_and_turns_across_processes(tmp_path):
    config = write_config(
        tmp_path,
        """
        agent:
          id: solo
          backend:
            type: scripted
            responses: ["The password of the archive is swordfish.", "I recall it."]
        memory:
          enabled: true
          persistent_memory: {enabled: true, session_name: archive}
        """,
    )
    assert run_cli("--config", str(config), "What is the archive password?").returncode == 0
    second = run_cli("--config", str(config), "Remind me about the archive.")
    assert second.returncode == 0, second.stderr
    logs = sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir())
    request = json.loads((logs[-1] / "turn_2" / "attempt_1" / "requests" / "solo_001.json").read_text())
    block = next(m["content"] for m in request["messages"] if m["content"].startswith("Relevant memories:"))
    assert "[From solo Turn 1] The password of the archive is swordfish." in block
    listing = massgen("memory", "search", "archive password", "--config", str(config), "--json")
    records = [json.loads(line) for line in listing.stdout.splitlines()]
    assert any(r["metadata"]["session_id"] == "archive" and r["metadata"]["turn"] == 1 for r in records)


def test_a_failing_memory_backend_never_stops_a_turn(tmp_path, in_process):
    run = in_process(
        """
        agent:
          id: solo
          backend: {type: scripted, responses: ["Still answered."]}
        memory:
          enabled: true
          persistent_memory:
            enabled: true
            embedding: {provider: openai, model: text-embedding-3-small, base_url: "http://127.0.0.1:9/v1"}
        """
    )
    result = run.app.ask("Q?")
    assert result.final_answer == "Still answered."
    assert result.memory_errors and all("failed" in error for error in result.memory_errors)
    summary = json.loads((run.app.run_log.directory / "turn_1" / "attempt_1" / "summary.json").read_text())
    assert summary["memory_errors"] == result.memory_errors


def test_second_process_on_a_local_store_gets_the_lock_remedy_and_still_answers(tmp_path):
    import subprocess
    import sys

    from tests.conftest import events_text, wait_until

    slow = write_config(
        tmp_path,
        "agent:\n  backend: {type: scripted, responses: [{text: 'first run', delay: 600}]}\n" + MEMORY,
        "slow.yaml",
    )
    quick = write_config(
        tmp_path, "agent:\n  backend: {type: scripted, responses: ['second run']}\n" + MEMORY, "quick.yaml"
    )
    first = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", str(slow), "Q1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The store opens before the first turn starts; waiting for the turn (rather than probing the lock,
        # which would take it for an instant and could make the first run's open fail) is race-free.
        wait_until(lambda: "ContextStatus" in events_text())
        second = run_cli("--config", str(quick), "Q2")
        assert second.returncode == 0 and second.stdout == "second run\n"
        assert "another massgen process is using this local memory store" in second.stderr
        assert "cleanup_qdrant_lock.sh" in second.stderr
    finally:
        first.kill()
        first.wait(10)


def test_domain_and_task_type_flags_key_and_filter_memories(tmp_path):
    config = write_config(
        tmp_path,
        "agent:\n  id: solo\n  backend: {type: scripted, responses: ['Tides follow the moon.']}\n" + MEMORY,
    )
    asked = massgen("--config", str(config), "--domain", "Ocean", "--task-type", "qa", "Why tides?")
    assert asked.exit_code == 0, asked.stderr
    keys = [
        json.loads(line)["key"]
        for line in massgen("memory", "list", "--config", str(config), "--json").stdout.splitlines()
    ]
    assert keys and all(key.startswith("ocean:qa:") for key in keys)
    found = massgen(
        "memory", "search", "tides", "--config", str(config), "--domain", "ocean", "--json"
    ).stdout
    assert "Tides follow the moon." in found
    other = massgen(
        "memory", "search", "tides", "--config", str(config), "--domain", "space", "--json"
    ).stdout
    assert other == ""


def one_agent(agent_id: str, reply: str, persistent: str) -> str:
    return f"""
agent:
  id: {agent_id}
  backend: {{type: scripted, responses: ["{reply}"]}}
memory:
  enabled: true
  persistent_memory: {persistent}
"""


@pytest.mark.parametrize(
    ("persistent", "everywhere"),
    [
        ("{enabled: true, session_name: null}", True),
        ("{enabled: true}", True),
        ("{enabled: true, session_name: harbour}", False),
    ],
    ids=["null_written", "null_left_out", "named"],
)
def test_session_name_null_searches_every_session_whether_written_or_left_out(
    tmp_path, in_process, persistent, everywhere
):
    keeper = in_process(one_agent("keeper", "The harbour gate code is 4711.", persistent), session_id="first")
    assert keeper.app.ask("What is the harbour gate code?").winner == "keeper"
    keeper.app.close()

    text = one_agent("visitor", "Noted.", persistent)
    visitor = in_process(text, session_id="second")
    visitor.app.ask("Remind me of the harbour gate code.")
    blocks = memory_blocks(visitor.requests("visitor"))
    seen = any("[From keeper Turn 1] The harbour gate code is 4711." in block for block in blocks)
    assert seen is everywhere
    [search] = [agent.toolbox.tools["memory_search"].spec for agent in visitor.app.agents]
    offered = search.parameters["properties"]["scope"]["enum"]
    assert offered == (["session", "all_sessions"] if everywhere else ["session"])
    loaded = load_config(write_config(tmp_path, text, "visitor.yaml")).config
    assert [searches_all_sessions(agent.memory) for agent in loaded.agents] == [everywhere]

"""MassGen's coordination keys, each shown changing the outcome or the timing of a scripted turn as MassGen
defines it (the scripted delays stand for how long the models take)."""

from __future__ import annotations

import json
from typing import Any

from tests.scripted import answer, scripted, vote

LIST = {"calls": [{"tool": "list_directory", "args": {"path": "."}}]}


def statuses(run: Any, agent_id: str) -> list[tuple[str, str]]:
    """The AgentStatus events of ``agent_id`` in turn 1's first attempt: (status, detail)."""
    path = run.app.run_log.directory / "turn_1" / "attempt_1" / "events.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    mine = [e for e in events if e["type"] == "AgentStatus" and e["agent_id"] == agent_id]
    return [(e["status"], e["detail"]) for e in mine]


def system_prompt(run: Any, agent_id: str, call: int = 0) -> str:
    return run.requests(agent_id)[call].messages[0]["content"]


def test_voting_sensitivity_sets_how_agents_judge_and_an_agent_may_have_its_own(in_process):
    turn = {"a": [answer("A"), vote("agent1", "fine")], "b": [vote("agent1", "fine", delay=0.2)]}
    run = in_process(
        scripted(
            turn,
            agent_keys={"b": {"voting_sensitivity": "lenient"}},
            orchestrator={"voting_sensitivity": "strict", "final_presentation": "reuse"},
        )
    )
    run.app.ask("Q?")
    assert "score the best current answer from 0 to 3" in system_prompt(run, "a")
    assert "does the best current answer address the original message well?" in system_prompt(run, "b")
    plain = in_process(scripted(turn, orchestrator={"final_presentation": "reuse"}))
    plain.app.ask("Q?")
    assert "0 to 3" not in system_prompt(plain, "a")


def test_roi_uses_the_voting_threshold_as_massgen_maps_it(in_process):
    run = in_process(
        scripted(
            {"a": [answer("A"), vote("agent1", "ok")], "b": [vote("agent1", "ok", delay=0.2)]},
            orchestrator={"voting_sensitivity": "roi", "voting_threshold": 60, "final_presentation": "reuse"},
        )
    )
    run.app.ask("Q?")
    assert "The quality bar is 7.0" in system_prompt(run, "a")


def test_answer_novelty_requirement_refuses_a_repeat(in_process):
    def config(requirement: str) -> str:
        return scripted(
            {
                "a": [answer("The capital of France is Paris."), vote("agent1", "mine")],
                "b": [
                    vote("agent1", "cancelled by a's answer", delay=0.3),
                    answer("The capital of France is Paris!"),
                    vote("agent1", "same answer"),
                ],
            },
            orchestrator={"answer_novelty_requirement": requirement, "final_presentation": "reuse"},
        )

    lenient = in_process(config("lenient"))
    assert set(lenient.app.ask("Q?").answers) == {"a", "b"}
    strict = in_process(config("strict"))
    result = strict.app.ask("Q?")
    assert set(result.answers) == {"a"}
    assert "too like an existing one" in strict.requests("b")[-1].messages[-1]["content"]


def test_max_new_answers_global_caps_the_attempt(in_process):
    run = in_process(
        scripted(
            {
                "a": [answer("A"), vote("agent1", "mine")],
                "b": [vote("agent1", "cancelled", delay=0.3), answer("B"), vote("agent1", "ok")],
            },
            orchestrator={"max_new_answers_global": 1, "final_presentation": "reuse"},
        )
    )
    result = run.app.ask("Q?")
    assert result.answers == {"a": "A"}
    assert [tool.name for tool in run.requests("b")[1].tools] == ["vote"]


QUIET = {"disable_injection": True, "final_presentation": "reuse"}
"""No one is interrupted, so only the key under test changes when an agent starts again."""


def test_fairness_makes_a_leader_wait_for_the_slowest_peer(in_process):
    def config(fair: bool) -> str:
        return scripted(
            {
                "fast": [answer("fast 1"), answer("fast 2"), vote("agent1", "mine")],
                "slow": [answer("slow 1", delay=0.5), vote("agent1", "fast is fine")],
            },
            orchestrator={**QUIET, "fairness_enabled": fair, "fairness_lead_cap_answers": 1},
        )

    unfair = in_process(config(False))
    unfair.app.ask("Q?")
    assert "slow 1" not in unfair.requests("fast")[1].messages[-1]["content"], "it ran ahead"
    fair = in_process(config(True))
    fair.app.ask("Q?")
    assert "slow 1" in fair.requests("fast")[1].messages[-1]["content"], "it waited for its peer"
    assert "waits: fairness" in fair.err.getvalue()


def test_defer_voting_until_all_answered_holds_an_agent_at_its_cap(in_process):
    def config(defer: bool) -> str:
        return scripted(
            {
                "quick": [answer("quick"), vote("agent1", "mine"), vote("agent1", "mine")],
                "late": [answer("late", delay=0.5), vote("agent1", "quick is fine")],
            },
            orchestrator={**QUIET, "max_new_answers_per_agent": 1, "defer_voting_until_all_answered": defer},
        )

    eager = in_process(config(False))
    eager.app.ask("Q?")
    assert "late" not in eager.requests("quick")[1].messages[-1]["content"]
    patient = in_process(config(True))
    patient.app.ask("Q?")
    assert "<agent2>\nlate\n</agent2>" in patient.requests("quick")[1].messages[-1]["content"]


def test_skip_final_presentation_reuses_the_winning_answer(in_process):
    turn = {
        "a": [answer("A"), vote("agent1", "mine"), "A, presented."],
        "b": [vote("agent1", "ok", delay=0.2)],
    }
    presented = in_process(scripted(turn))
    assert presented.app.ask("Q?").final_answer == "A, presented."
    skipped = in_process(scripted(turn, orchestrator={"skip_final_presentation": True}))
    assert skipped.app.ask("Q?").final_answer == "A"
    assert [request.purpose for request in skipped.requests("a")] == ["coordination", "coordination"]


def test_final_answer_strategy_synthesize_asks_for_a_synthesis(in_process):
    run = in_process(
        scripted(
            {"a": [answer("A"), vote("agent1", "mine"), "A and B, together."], "b": [answer("B", delay=0.2)]},
            orchestrator={"final_answer_strategy": "synthesize", "max_new_answers_per_agent": 1},
        )
    )
    result = run.app.ask("Q?")
    assert result.final_answer == "A and B, together."
    assert "as a synthesis" in run.requests(result.winner or "")[-1].messages[-1]["content"]


def peer_update_turn(orchestrator: dict[str, Any], more: dict[str, list[Any]] | None = None) -> str:
    """``b`` answers at once, then works with a tool (at 1 s) while ``a`` (and the agents of ``more``)
    answer, then votes for its own answer: whether that vote counts depends on how a's answer reached
    it."""
    b = [answer("b's answer"), {**LIST, "delay": 1.0}, vote("b", "mine"), vote("a", "a's is better")]
    return scripted(
        {"a": [answer("a's answer", delay=0.2), vote("a", "mine")], **(more or {}), "b": b},
        backends={"b": {"cwd": "ws"}},
        orchestrator={"final_presentation": "reuse", **orchestrator},
    )


def test_inject_adds_a_peers_new_answer_to_the_next_tool_result(in_process):
    run = in_process(peer_update_turn({"max_midstream_injections_per_round": 2}))
    result = run.app.ask("Q?")
    tool_result = run.requests("b")[2].messages[-1]
    assert tool_result["role"] == "tool" and "NEW ANSWERS ARRIVED" in tool_result["content"]
    assert "a's answer" in tool_result["content"]
    assert ("restarted", "new answers to consider") not in statuses(run, "b"), "it was not cancelled"
    assert ("b", "b") in [(v.voter, v.target) for v in result.votes], "its vote on what it had seen counts"


def test_past_the_injection_cap_the_agent_starts_again_at_its_next_safe_point(in_process):
    capped = {"max_midstream_injections_per_round": 1, "fairness_enabled": True}
    another = {"c": [answer("c's answer", delay=0.3), vote("a", "ok")]}
    run = in_process(peer_update_turn(capped, another))
    run.app.ask("Q?")
    assert "NEW ANSWERS ARRIVED" not in run.requests("b")[2].messages[-1]["content"], "two answers, cap one"
    assert ("restarted", "vote was cast on an outdated set of answers") in statuses(run, "b")


def test_defer_peer_updates_until_restart_discounts_a_vote_on_unseen_answers(in_process):
    run = in_process(peer_update_turn({"defer_peer_updates_until_restart": True}))
    result = run.app.ask("Q?")
    assert "NEW ANSWERS ARRIVED" not in run.requests("b")[2].messages[-1]["content"]
    assert ("restarted", "vote was cast on an outdated set of answers") in statuses(run, "b")
    assert ("b", "a") in [(v.voter, v.target) for v in result.votes]


def test_disable_injection_lets_a_working_agent_finish_as_it_was(in_process):
    run = in_process(peer_update_turn({"disable_injection": True}))
    result = run.app.ask("Q?")
    assert not any(status == "restarted" for status, _ in statuses(run, "b"))
    assert ("b", "b") in [(v.voter, v.target) for v in result.votes]


def test_round_timeouts_warn_then_refuse_tools_then_end_the_agent(in_process):
    run = in_process(
        scripted(
            {
                "busy": [{**LIST, "delay": 0.05}, LIST],
                "quick": [answer("quick", delay=1.0), vote("quick", "mine")],
            },
            backends={"busy": {"cwd": "ws"}},
            orchestrator={"final_presentation": "reuse"},
            timeout_settings={"initial_round_timeout_seconds": 0.01, "round_timeout_grace_seconds": 0},
        )
    )
    result = run.app.ask("Q?")
    requests = run.requests("busy")
    assert "⏰ This step's time is nearly up" in requests[1].messages[-1]["content"]
    assert "not run: this step's time is up" in requests[2].messages[-1]["content"]
    failed = [detail for status, detail in statuses(run, "busy") if status == "failed"]
    assert failed and "refused in a row" in failed[0]
    assert result.winner == "quick"

"""Coordination end to end with scripted agents: refine, vote, ties, bad votes, limits, restarts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted import answer, scripted, vote

THREE_AGENTS = scripted(
    {
        "agent_a": [answer("Paris."), vote("agent2", "more complete")],
        "agent_b": [
            answer("Paris is the capital of France.", delay=0.2),
            answer("Paris is the capital and largest city of France."),
            vote("agent2", "refined"),
            "The capital of France is Paris.",
        ],
        "agent_c": [vote("agent_b", "clearest", delay=0.5)],
    }
)
REUSE = {"final_presentation": "reuse"}


def summary_of(run, turn: int = 1, attempt: int = 1) -> dict:
    path = run.app.run_log.directory / f"turn_{turn}" / f"attempt_{attempt}" / "summary.json"
    return json.loads(path.read_text())


def test_three_agents_refine_vote_and_present(in_process):
    run = in_process(THREE_AGENTS)
    result = run.app.ask("What is the capital of France?")
    assert result.winner == "agent_b"
    assert result.answers == {
        "agent_a": "Paris.",
        "agent_b": "Paris is the capital and largest city of France.",
    }
    assert [(v.voter, v.target) for v in result.votes] == [
        ("agent_a", "agent_b"),
        ("agent_b", "agent_b"),
        ("agent_c", "agent_b"),
    ]
    assert result.final_answer == "The capital of France is Paris."
    assert run.out.getvalue() == "The capital of France is Paris.\n"
    assert result.end_reason == "all agents voted"
    # agent_b refined after seeing agent_a's answer under its alias.
    refine_request = run.requests("agent_b")[1]
    assert "<agent1>\nParis.\n</agent1>" in refine_request.messages[-1]["content"]
    assert summary_of(run)["winner"] == "agent_b"


def test_tie_goes_to_registration_order(in_process):
    run = in_process(
        scripted(
            {
                "first": [answer("A"), vote("agent2", "B is good", delay=0.3)],
                "second": [
                    answer("B (slow, superseded)", delay=5),
                    answer("B", delay=0.1),
                    vote("agent1", "A is good"),
                ],
            },
            orchestrator=REUSE,
        )
    )
    result = run.app.ask("Q?")
    assert {(v.voter, v.target) for v in result.votes} == {("first", "second"), ("second", "first")}
    assert result.winner == "first"
    assert result.final_answer == "A"


def test_vote_for_unknown_agent_is_reasked_and_never_recorded(in_process):
    run = in_process(
        scripted(
            {
                "a": [answer("Answer A"), vote("agent1", "mine")],
                # b's first step lasts until a's answer restarts it, whatever the machine's speed
                "b": [vote("agent7", "?", delay=60), vote("agent7", "?"), vote("agent1", "fine")],
            },
            orchestrator=REUSE,
        )
    )
    result = run.app.ask("Q?")
    assert [(v.voter, v.target) for v in result.votes] == [("a", "a"), ("b", "a")]
    reask = run.requests("b")[-1].messages[-1]["content"]
    assert "'agent7' is not an agent here (choose from: agent1)" in reask


def test_agent_that_never_decides_is_reasked_then_left_out(in_process):
    run = in_process(
        scripted(
            {"a": [answer("Answer A"), vote("a", "mine")], "undecided": ["I am not sure what to do."]},
            orchestrator={**REUSE, "max_reasks": 1},
        )
    )
    result = run.app.ask("Q?")
    assert result.winner == "a"
    assert [v.voter for v in result.votes] == ["a"]
    assert result.end_reason == "every agent finished; not all of them voted"
    last = run.requests("undecided")[-1]
    assert last.messages[-1]["content"].startswith("You did not finish with an action")
    assert "undecided" in run.err.getvalue() and "no valid decision" in run.err.getvalue()


def test_turn_timeout_ends_with_best_available_answer(in_process):
    run = in_process(
        scripted(
            {
                "quick": [answer("Quick answer"), vote("agent1", "mine", delay=30)],
                "slow": [answer("Slow", delay=30)],
            },
            orchestrator=REUSE,
            # long enough for the quick answer on a loaded machine; the others wait 30 s
            timeout_settings={"orchestrator_timeout_seconds": 3},
        )
    )
    result = run.app.ask("Q?")
    assert result.final_answer == "Quick answer"
    assert result.end_reason.startswith("orchestrator timeout (3s) reached"), result.end_reason


def test_step_timeout_fails_only_that_agent(in_process):
    run = in_process(
        scripted(
            {
                "quick": [answer("Quick answer"), vote("agent1", "mine")],
                "stuck": [vote("agent1", "late", delay=30)],
            },
            orchestrator={**REUSE, "step_timeout_seconds": 0.3},
        )
    )
    result = run.app.ask("Q?")
    assert result.winner == "quick"
    assert "step timed out after 0.3s" in run.err.getvalue()


def test_new_answer_cancels_in_flight_steps_of_the_others(in_process):
    run = in_process(
        scripted(
            {
                "fast": [answer("Fast answer"), vote("agent1", "mine")],
                "slow": [
                    answer("Superseded", text="working long", delay=30),
                    vote("agent1", "fast was right"),
                ],
            },
            orchestrator=REUSE,
        )
    )
    result = run.app.ask("Q?")
    assert "Superseded" not in result.answers.values()
    slow_requests = run.requests("slow")
    assert len(slow_requests) == 2
    assert "(no answers yet)" in slow_requests[0].messages[-1]["content"]
    assert "<agent1>\nFast answer\n</agent1>" in slow_requests[1].messages[-1]["content"]
    assert result.winner == "fast"


def test_answer_cap_removes_the_new_answer_tool(in_process):
    run = in_process(
        scripted(
            {"a": [answer("v1"), vote("agent1", "done")], "b": [vote("agent1", "ok", delay=0.1)]},
            orchestrator={**REUSE, "max_new_answers_per_agent": 1},
        )
    )
    run.app.ask("Q?")
    assert [t.name for t in run.requests("a")[1].tools] == ["vote"]


def test_post_evaluation_restart_starts_a_second_attempt(in_process):
    restart = {"tool": "restart_orchestration", "args": {"reason": "too short", "instructions": "add detail"}}
    run = in_process(
        scripted(
            {
                "a": [
                    answer("first try"),
                    vote("agent1", "mine"),
                    restart,
                    answer("second try, detailed"),
                    vote("agent1", "mine"),
                    {"tool": "submit", "args": {}},
                ],
                "b": [vote("agent1", "ok", delay=0.1)],
            },
            orchestrator={**REUSE, "coordination": {"max_orchestration_restarts": 1}},
        )
    )
    result = run.app.ask("Q?")
    assert result.attempt == 2
    assert result.final_answer == "second try, detailed"
    assert summary_of(run, attempt=1)["final_answer"] == "first try"
    assert "add detail" in run.requests("a")[3].messages[-1]["content"]


def test_logs_hold_requests_events_and_summary(in_process):
    run = in_process(THREE_AGENTS)
    run.app.ask("What is the capital of France?")
    attempt = Path(run.app.run_log.directory) / "turn_1" / "attempt_1"
    names = sorted(p.name for p in (attempt / "requests").iterdir())
    assert names[:3] == ["agent_a_001.json", "agent_a_002.json", "agent_a_003.json"]
    first = json.loads((attempt / "requests" / "agent_b_001.json").read_text())
    assert first["messages"][-1]["role"] == "user" and first["tools"] == ["new_answer"]
    events = [json.loads(line) for line in (attempt / "events.jsonl").read_text().splitlines()]
    assert {"AgentStatus", "AgentText", "FinalAnswer", "TurnEnded"} <= {e["type"] for e in events}
    summary = summary_of(run)
    assert set(summary) == {
        "session_id",
        "turn",
        "attempt",
        "question",
        "answers",
        "votes",
        "winner",
        "final_answer",
        "end_reason",
        "usage",
        "timings_s",
        "memory_errors",
        "tool_calls",
        "output_folder",
        "agent_status",
        "warnings",
        "total_usage",
        "turn_usage",
    }
    assert summary["usage"]["agent_a"]["input_tokens"] > 0
    assert summary["total_usage"]["cost_usd"] == 0.0, "scripted agents are free"
    assert sum(e["type"] == "AgentUsage" for e in events) == len(list((attempt / "requests").iterdir()))


def test_simultaneous_answers_leave_no_step_running(tmp_path):
    import asyncio

    import yaml

    from massgen_cli.agent_builder import build_agents
    from massgen_cli.config import load_document
    from massgen_cli.coordination.orchestrator import Orchestrator
    from massgen_cli.coordination.policy import CoordinationPolicy

    text = scripted({name: [answer(f"answer {name}"), vote("agent1", "r")] for name in ("a", "b", "c")})
    config = load_document(yaml.safe_load(text), tmp_path / "c.yaml").config
    agents = build_agents(config, lambda event: None)

    async def scenario():  # type: ignore[no-untyped-def]
        result = await Orchestrator(agents, CoordinationPolicy.of(config)).run("Q?")
        running = [t for t in asyncio.all_tasks() if t.get_name().startswith("step:") and not t.done()]
        return result, running

    result, running = asyncio.run(scenario())
    assert running == []
    assert result.winner == "a" and set(result.answers) == {"a", "b", "c"}
    assert len(result.votes) == 3

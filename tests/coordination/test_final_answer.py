"""Exactly one FinalAnswer per turn, on every path to it, and the answer once on stdout."""

from __future__ import annotations

import json

import pytest

from tests.scripted import answer, scripted, vote

SINGLE = scripted({"solo": ["Paris."]})
AGREEMENT = scripted(
    {"a": ["Paris."], "b": ["It is Paris."], "c": ["Lyon."]},
    orchestrator={"decide_by": "agreement", "final_presentation": "reuse"},
)


def votes(presentation: str) -> str:
    return scripted(
        {
            "a": [answer("Paris."), vote("agent1", "right"), "Paris, presented."],
            "b": [vote("agent1", "right", delay=0.2)],
        },
        orchestrator={"final_presentation": presentation},
    )


RESTART = {"tool": "restart_orchestration", "args": {"reason": "wrong city", "instructions": "check it"}}
RESTARTED = scripted(
    {
        "a": [
            answer("Lyon."),
            vote("agent1", "mine"),
            "Lyon, presented.",
            RESTART,
            answer("Paris."),
            vote("agent1", "mine"),
            "Paris, presented.",
            {"tool": "submit", "args": {}},
        ],
        "b": [vote("agent1", "ok", delay=0.2)],
    },
    orchestrator={"coordination": {"max_orchestration_restarts": 1}},
)

PATHS = {
    "single agent": (SINGLE, "Paris."),
    "agreement": (AGREEMENT, "Paris."),
    "votes, reuse": (votes("reuse"), "Paris."),
    "votes, present": (votes("present"), "Paris, presented."),
    "present, after a rejected attempt": (RESTARTED, "Paris, presented."),
}


def final_answer_events(run) -> list[dict]:  # type: ignore[no-untyped-def]
    """The FinalAnswer events logged in every attempt of turn 1."""
    events = []
    for path in sorted((run.app.run_log.directory / "turn_1").glob("attempt_*/events.jsonl")):
        events += [json.loads(line) for line in path.read_text().splitlines()]
    return [event for event in events if event["type"] == "FinalAnswer"]


@pytest.mark.parametrize("path", PATHS)
def test_exactly_one_final_answer_per_turn(in_process, path):
    config, expected = PATHS[path]
    run = in_process(config)
    result = run.app.ask("What is the capital of France?")
    assert result.final_answer == expected
    events = final_answer_events(run)
    assert [(event["agent_id"], event["text"]) for event in events] == [(result.winner, expected)]
    assert run.out.getvalue() == expected + "\n"


def test_the_final_answer_is_logged_in_the_accepted_attempt(in_process):
    run = in_process(RESTARTED)
    result = run.app.ask("What is the capital of France?")
    assert result.attempt == 2
    first = (run.app.run_log.directory / "turn_1" / "attempt_1" / "events.jsonl").read_text()
    assert "FinalAnswer" not in first and "Lyon, presented." in first, "the rejected one was presented"

"""A vote names only an answer the voter can see: how a vote for an answer not in view yet is handled
(as MassGen does), a vote for an unknown agent refused, and the shipped scripted examples, which now
vote only for answers in view, running without a line that looks like an error."""

from __future__ import annotations

import re

import pytest

from massgen_cli.config.sources import resolve_config_path
from tests.scripted import answer, scripted, vote

REUSE = {"final_presentation": "reuse"}
ERROR_LOOKING = re.compile(
    r"error|fail|invalid|not an agent|no valid decision|no answer yet|traceback|exception|✗|⚠|❌", re.I
)


def error_looking_lines(*texts: str) -> list[str]:
    return [line for text in texts for line in text.splitlines() if ERROR_LOOKING.search(line)]


@pytest.mark.parametrize(
    ("example", "question", "winner"),
    [
        ("scripted_three_agents", "What is the capital of France?", "agent_b"),
        ("improve_file", "Write a README for the inventory service.", "editor"),
    ],
)
def test_the_shipped_examples_run_without_an_error_looking_line(in_process, example, question, winner):
    run = in_process(resolve_config_path(f"@examples/{example}").read_text())
    result = run.app.ask(question)
    assert result.winner == winner
    assert {vote.target for vote in result.votes} == {winner}, "every agent voted for the winner"
    assert result.end_reason == "all agents voted"
    assert "voted" in run.err.getvalue() and run.out.getvalue().strip() == result.final_answer
    assert error_looking_lines(run.err.getvalue(), run.out.getvalue()) == []


def test_a_vote_for_a_peer_whose_answer_is_on_its_way_is_refused_then_waits_for_it(in_process):
    """MassGen refuses a vote for an agent with no answer and asks again; when the voter still names a
    peer that is at work, it waits for new answers (not a failure) and decides again once they are in."""
    run = in_process(
        scripted(
            {
                "quick": [answer("Paris."), vote("agent2", "more complete")],
                "thorough": [
                    answer("superseded", delay=30),
                    answer("Paris is the capital and largest city of France.", delay=2),
                    vote("agent2", "mine is complete"),
                ],
            },
            orchestrator=REUSE,
        )
    )
    result = run.app.ask("What is the capital of France?")
    quick = run.requests("quick")
    last_words = [request.messages[-1]["content"] for request in quick]
    refused = [text for text in last_words if "has no answer yet" in text]
    assert refused == [
        "'agent2' has no answer yet: vote for an answer you can see (agent1), or give your own with "
        "new_answer."
    ], "refused once and asked again, as MassGen does"
    err = run.err.getvalue()
    assert "[quick] waits: its vote named thorough, whose answer is not in yet" in err
    assert "no valid decision" not in err and "[quick] done" not in err
    in_view = "<agent2>\nParis is the capital and largest city of France.\n</agent2>"
    assert in_view in last_words[-1], "it decided again with the answer in view"
    assert [(v.voter, v.target) for v in result.votes] == [("quick", "thorough"), ("thorough", "thorough")]
    assert result.winner == "thorough" and result.end_reason == "all agents voted"


def test_a_vote_cast_before_the_voter_saw_the_named_answer_is_not_counted_and_the_voter_starts_again(
    in_process,
):
    """The named answer exists, but came after the voter's step began (``peer_updates: defer`` lets the
    step go on): MassGen ignores such a vote and restarts the voter with the new answers."""
    run = in_process(
        scripted(
            {
                "quick": [answer("Paris."), vote("agent2", "more complete", delay=1)],
                "thorough": [answer("Paris, the capital of France.", delay=0.2), vote("agent2", "mine")],
            },
            orchestrator={**REUSE, "peer_updates": "defer"},
        )
    )
    result = run.app.ask("What is the capital of France?")
    assert "[quick] restarted: vote was cast on an outdated set of answers" in run.err.getvalue()
    voting = [r for r in run.requests("quick") if r.offers_tool("vote")]
    assert "<agent2>" not in voting[0].messages[-1]["content"], "the first vote named an answer not in view"
    assert "<agent2>\nParis, the capital of France.\n</agent2>" in voting[-1].messages[-1]["content"]
    votes = sorted((v.voter, v.target) for v in result.votes)
    assert votes == [("quick", "thorough"), ("thorough", "thorough")]
    assert error_looking_lines(run.err.getvalue()) == []


def test_a_vote_for_an_unknown_agent_is_still_refused_clearly(in_process):
    run = in_process(
        scripted(
            {"a": [answer("Answer A"), vote("agent1", "mine")], "b": [vote("agent7", "?", delay=0.2)]},
            orchestrator={**REUSE, "max_reasks": 1},
        )
    )
    result = run.app.ask("Q?")
    assert [(v.voter, v.target) for v in result.votes] == [("a", "a")]
    reask = run.requests("b")[-1].messages[-1]["content"]
    assert reask == "'agent7' is not an agent here (choose from: agent1)."
    assert "[b] done: no valid decision after re-asks: 'agent7' is not an agent here" in run.err.getvalue()
    assert "[b] waits" not in run.err.getvalue()

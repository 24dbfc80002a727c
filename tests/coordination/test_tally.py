from massgen_cli.coordination.tally import Vote, alias_map, pick_winner, resolve_target, tally
from massgen_cli.events import Notice, RunEvent

IDS = ["alpha", "beta", "gamma"]


def test_aliases_follow_registration_order():
    assert alias_map(IDS) == {"agent1": "alpha", "agent2": "beta", "agent3": "gamma"}


def test_targets_resolve_by_id_or_alias():
    assert resolve_target("agent2", IDS) == "beta"
    assert resolve_target("Agent 3", IDS) == "gamma"
    assert resolve_target("alpha", IDS) == "alpha"
    assert resolve_target("agent9", IDS) is None
    assert resolve_target("", IDS) is None


def test_plurality_wins():
    votes = [Vote("alpha", "beta"), Vote("beta", "beta"), Vote("gamma", "alpha")]
    assert pick_winner(votes, {"alpha": "a", "beta": "b"}, IDS) == "beta"


def test_tie_goes_to_registration_order():
    votes = [Vote("alpha", "gamma"), Vote("gamma", "beta")]
    assert pick_winner(votes, {"beta": "b", "gamma": "c"}, IDS) == "beta"


def test_no_votes_means_first_answer():
    assert pick_winner([], {"gamma": "c", "beta": "b"}, IDS) == "beta"


def test_no_answers_means_no_winner():
    assert pick_winner([Vote("alpha", "beta")], {}, IDS) is None


def test_votes_for_agents_without_answers_do_not_count():
    votes = [Vote("alpha", "gamma"), Vote("beta", "gamma"), Vote("gamma", "beta")]
    assert tally(votes, ["beta"], IDS) == {"beta": 1}
    assert pick_winner(votes, {"beta": "b"}, IDS) == "beta"


def test_agreement_counts_the_words_that_carry_the_answer():
    from massgen_cli.coordination.tally import agreement_scores, content_words, pick_by_agreement

    question = "What is the capital of Italy?"
    assert content_words("The capital of Italy is Rome.", question) == {"rome"}
    answers = {"a": "Il Coriobella.", "b": "The capital of Italy is Rome.", "c": "Rome"}
    assert agreement_scores(answers, question) == {"a": 0.0, "b": 1.0, "c": 1.0}
    assert pick_by_agreement(answers, ["a", "b", "c"], question) == "b", "ties go to registration order"
    assert pick_by_agreement({"a": "blue", "b": "red"}, ["a", "b"], "What colour?") == "a", "no agreement"
    assert pick_by_agreement({}, ["a"], "q") is None


AGREEMENT = """
agents:
  - {id: first, backend: {type: scripted, responses: ["10 - 4 = 2"]}}
  - {id: second, backend: {type: scripted, responses: ["10 - 4 = 6."]}}
  - {id: third, backend: {type: scripted, responses: ["The difference is 6."]}}
orchestrator: {decide_by: agreement, final_presentation: reuse}
"""


def test_decide_by_agreement_asks_each_agent_once_and_the_agreed_answer_wins(in_process):
    run = in_process(AGREEMENT)
    heard: list[RunEvent] = []
    run.app.events.subscribe(heard.append)
    result = run.app.ask("What is 10 - 4?")
    assert result.winner == "second" and result.final_answer == "10 - 4 = 6."
    assert result.votes == [] and len(result.answers) == 3
    assert (
        result.end_reason
        == "chosen by agreement among 3 answer(s); a tie, broken by likeness to the other answers"
    )
    said = [event.message for event in heard if isinstance(event, Notice) and event.level == "debug"]
    assert any(
        line.startswith("agreement scores: first 0.00, second 1.00, third 1.00; likeness") for line in said
    )
    for agent in run.app.agents:
        scripted = agent.backend.inner  # type: ignore[attr-defined]
        assert scripted.calls == 1, "answered once, on its own: no restarts, no votes"

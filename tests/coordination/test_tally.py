from massgen_cli.coordination.tally import Vote, alias_map, pick_winner, resolve_target, tally

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

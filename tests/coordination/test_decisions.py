"""Decisions from JSON replies, including replies the token limit cut short."""

from __future__ import annotations

from massgen_cli.backends.base import Completion
from massgen_cli.coordination.decisions import NewAnswer, VoteFor, parse_decision
from massgen_cli.coordination.toolloop import json_answer


def test_a_new_answer_cut_by_the_token_limit_keeps_what_it_said():
    cut = Completion(text='{"action": "new_answer", "content": "Paris is the capital, on the \\"Seine\\" riv')
    assert parse_decision(cut) == NewAnswer('Paris is the capital, on the "Seine" riv')
    assert json_answer('{"action": "answer", "content": "Thursday at 10') == "Thursday at 10"


def test_whole_replies_and_cut_votes():
    assert parse_decision(
        Completion(text='{"action": "vote", "agent_id": "agent1", "reason": "ok"}')
    ) == VoteFor("agent1", "ok")
    assert parse_decision(Completion(text='{"action": "vote", "agent_id": "age')) is None
    assert parse_decision(Completion(text="no JSON at all")) is None

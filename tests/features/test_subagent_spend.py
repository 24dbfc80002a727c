"""A subagent's spend is its parent run's: every call of its team counts in the parent's ledger as the
spawning agent's (``AgentUsage`` with ``via``), in the turn's cost and against the parent's spending caps,
and a team whose parent's caps are spent starts no new step. Scripted agents priced by
``backend.pricing`` (a dollar per thousand tokens) make the spend real figures."""

from __future__ import annotations

from typing import Any

import yaml

import massgen_cli
from massgen_cli.events import AgentUsage, RunEvent, Usage
from massgen_cli.feature_events import SubagentFinished
from tests.features.test_subagents import echo, of, spawn
from tests.scripted import scripted

PRICED = {"pricing": {"input_per_million": 1000, "output_per_million": 1000}}
LONG_ANSWER = "Paris is the capital of France. " * 600
"""A reply of some 4,000 tokens: $4 at the test's price."""


def document(lead: list[Any], helpers: dict[str, list[Any]], **orchestrator: Any) -> dict[str, Any]:
    team = {
        "agents": [
            {"id": helper, "backend": {"type": "scripted", "responses": responses, **PRICED}}
            for helper, responses in helpers.items()
        ]
    }
    coordination = {"enable_subagents": True, "subagent_orchestrator": team, "subagent_max_cost_usd": None}
    backends = {"lead": {"cwd": "ws_lead", **PRICED}}
    settings = {"coordination": coordination, **orchestrator}
    return yaml.safe_load(scripted({"lead": lead}, backends=backends, orchestrator=settings))


def ask(config: dict[str, Any], tmp_path) -> tuple[massgen_cli.Result, list[RunEvent]]:  # type: ignore[no-untyped-def]
    events: list[RunEvent] = []
    result = massgen_cli.run(
        config, "Find the capital.", state_dir=tmp_path / "state", on_event=events.append
    )
    return result, events


def test_a_subagents_calls_count_in_the_parents_ledger_as_the_spawning_agents(tmp_path):
    config = document(
        [spawn("Find the capital of France."), echo(r'"status": "\w+"')], {"helper": ["Paris."]}
    )
    result, events = ask(config, tmp_path)
    assert result.answer == '"status": "completed"'
    (finished,) = of(SubagentFinished, events)
    charged = [event for event in of(AgentUsage, events) if event.via]
    assert [(event.agent_id, event.via) for event in charged] == [("lead", finished.subagent_id)]
    spent = Usage.total(event.usage for event in charged)
    assert (spent.input_tokens, spent.output_tokens) == (finished.input_tokens, finished.output_tokens)
    assert spent.cost_usd == finished.cost_usd and spent.cost_usd > 0
    own = Usage.total(event.usage for event in of(AgentUsage, events) if not event.via)
    assert result.tokens == own.tokens + spent.tokens, "the turn's figures hold the subagent's spend"
    assert result.cost_usd is not None and abs(result.cost_usd - (own.cost_usd + spent.cost_usd)) < 1e-9


def test_a_subagents_spend_stops_the_parent_at_its_cap(tmp_path):
    config = document(
        [spawn("Find the capital of France."), echo(r'"answer": "[^"]{20}')],
        {"helper": [LONG_ANSWER]},
        max_cost_usd=2.0,
    )
    result, events = ask(config, tmp_path)
    (finished,) = of(SubagentFinished, events)
    assert finished.status == "completed" and finished.cost_usd > 2.0, "the helper's one call spent $4"
    assert result.answer is None, "the lead's next call was refused: its subagent had spent the cap"
    assert "spending cap reached" in result.end_reason and "of $2.00" in result.end_reason


def test_a_team_starts_no_step_once_its_parents_cap_is_spent(tmp_path):
    helpers = {"helper_a": [LONG_ANSWER, "more"], "helper_b": ["Paris.", "more"]}
    config = document(
        [spawn("Find the capital of France."), echo(r'"status": "\w+"')], helpers, max_cost_usd=2.0
    )
    result, events = ask(config, tmp_path)
    (finished,) = of(SubagentFinished, events)
    assert finished.status == "cost_cap", (
        "the team stopped after its first answers: the parent's cap was spent"
    )
    assert (
        "spending cap reached" in finished.reason and "in the run that started this team" in finished.reason
    )
    charged = [event for event in of(AgentUsage, events) if event.via]
    assert 1 <= len(charged) <= 2, "a call each at most (started before the cap was spent), no vote after"
    assert result.answer is None and "spending cap reached" in result.end_reason

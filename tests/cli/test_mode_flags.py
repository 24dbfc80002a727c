"""MassGen's mode flags: ``--single-agent [ID]`` runs one agent of the config, ``--quick`` one answer per
agent with no refinement, ``--personas MODE`` a persona per agent."""

from __future__ import annotations

import json

from massgen_cli.cli.mode_flags import single_agent_argv
from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder

THREE = "@examples/scripted_three_agents"


def _answered_by() -> list[str]:
    events = (first_attempt_folder() / "events.jsonl").read_text().splitlines()
    return [
        event["agent_id"]
        for event in map(json.loads, events)
        if event["type"] == "AgentStatus" and event["status"] == "answered"
    ]


def test_single_agent_runs_the_named_agent_alone():
    run = massgen("-c", THREE, "--single-agent", "agent_b", "Q?")
    assert run.exit_code == 0, run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert set(summary["usage"]) == {"agent_b"} and summary["winner"] == "agent_b"


def test_single_agent_without_an_id_is_the_first_agent():
    assert single_agent_argv(["--single-agent", "--quiet", "Q?"]) == ["--single-agent=", "--quiet", "Q?"]
    assert single_agent_argv(["--single-agent", "agent_b", "Q?"]) == ["--single-agent", "agent_b", "Q?"]
    run = massgen("-c", THREE, *single_agent_argv(["--single-agent", "--quiet"]), "Q?")
    assert run.exit_code == 0, run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert set(summary["usage"]) == {"agent_a"}


def test_an_unknown_agent_is_a_usage_error_naming_the_agents():
    run = massgen("-c", THREE, "--single-agent", "nobody", "Q?")
    assert run.exit_code == 2
    assert "--single-agent nobody: the config has no such agent (agent_a, agent_b, agent_c)" in run.stderr


def test_quick_asks_one_answer_of_each_agent():
    run = massgen("-c", THREE, "--quick", "Q?")
    assert run.exit_code == 0 and run.stdout.strip(), run.stderr
    answered = _answered_by()
    assert sorted(answered) == sorted(set(answered)) and len(answered) >= 2, "no agent refined its answer"


def test_quick_with_a_single_agent_takes_its_answer_as_final():
    run = massgen("-c", THREE, "--quick", "--single-agent", "agent_a", "Q?")
    assert run.exit_code == 0 and run.stdout.strip(), run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["winner"] == "agent_a" and summary["votes"] == [] and set(summary["usage"]) == {"agent_a"}


def _system_prompts(agent_id: str) -> list[str]:
    found = sorted((first_attempt_folder() / "requests").glob(f"{agent_id}_*.json"))
    messages = [json.loads(path.read_text())["messages"] for path in found]
    return [m[0]["content"] for m in messages if m and m[0]["role"] == "system"]


def test_personas_gives_each_agent_a_persona_of_the_mode_and_off_gives_none():
    from massgen_cli.features.personas import FIXED

    run = massgen("-c", THREE, "--personas", "methodology", "Q?")
    assert run.exit_code == 0, run.stderr
    personas = FIXED["methodology"]  # a scripted model writes no personas: the fixed set is used
    assert f"[agent_b] persona: {personas[1]}" in run.stderr
    assert f"Your persona for this question: {personas[1]}" in _system_prompts("agent_b")[0]
    off = massgen("-c", THREE, "--personas", "off", "Q?")
    assert off.exit_code == 0 and "persona: " not in off.stderr


def test_personas_names_its_modes_when_one_is_wrong():
    run = massgen("-c", THREE, "--personas", "wild", "Q?")
    assert run.exit_code == 2 and "perspective" in run.stderr and "methodology" in run.stderr

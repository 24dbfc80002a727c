"""MassGen's ``--fast``, ``--plan``, ``--plan-and-execute`` and ``--eval-criteria``, each on a scripted
config run end to end through the command line: what reaches the agents' requests, what the run keeps
and what it prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from massgen_cli.plans import read_plan
from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, state_folder
from tests.scripted import answer, scripted, vote

PLAN = {
    "tasks": [
        {"id": "T1", "description": "Find the capital", "chunk": "C01", "priority": "high"},
        {
            "id": "T2",
            "description": "Write it down",
            "chunk": "C02",
            "depends_on": ["T1"],
            "verification": "the note names Paris",
        },
    ]
}
PLAN_TEXT = f"The plan:\n```json\n{json.dumps(PLAN)}\n```"


def config_file(agents: dict[str, list[Any]], **sections: Any) -> str:
    path = Path("config.yaml")
    path.write_text(scripted(agents, **sections), encoding="utf-8")
    return str(path)


def requests(agent_id: str, turn: int = 1) -> list[dict[str, Any]]:
    found = sorted((first_attempt_folder(turn) / "requests").glob(f"{agent_id}_*.json"))
    return [json.loads(path.read_text()) for path in found]


def system_prompt(agent_id: str, turn: int = 1) -> str:
    return requests(agent_id, turn)[0]["messages"][0]["content"]


def events(kind: str, turn: int = 1) -> list[dict[str, Any]]:
    lines = (first_attempt_folder(turn) / "events.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["type"] == kind]


def test_fast_puts_the_presets_rules_in_every_system_prompt_and_the_configs_values_win():
    config = config_file({"a": ["Paris."]})
    run = massgen("-c", config, "--fast", "Capital of France?")
    assert run.exit_code == 0 and run.stdout.strip() == "Paris.", run.stderr
    prompt = system_prompt("a")
    assert "fix what is broken, defer what is merely imperfect" in prompt
    assert "Check a candidate at most 1 time(s) per step" in prompt
    assert "No verify-and-fix loops" in prompt and "Reuse the notes, plans and task lists" in prompt

    own = config_file({"a": ["Paris."]}, orchestrator={"coordination": {"max_internal_fix_loops": 2}})
    again = massgen("-c", own, "--fast", "Capital of France?")
    assert again.exit_code == 0, again.stderr
    latest = sorted((state_folder() / "massgen_logs").iterdir())[-1] / "turn_1" / "attempt_1" / "requests"
    prompt = json.loads(next(latest.glob("a_*.json")).read_text())["messages"][0]["content"]
    assert "At most 2 verify-and-fix loop(s) per step" in prompt and "No verify-and-fix loops" not in prompt

    plain = config_file({"a": ["Paris."]})
    assert massgen("-c", plain, "Capital of France?").exit_code == 0
    latest = sorted((state_folder() / "massgen_logs").iterdir())[-1] / "turn_1" / "attempt_1" / "requests"
    assert "Work fast" not in next(latest.glob("a_*.json")).read_text(), "without --fast, no such rules"


def test_plan_refuses_an_answer_without_a_plan_and_keeps_and_prints_the_chosen_plan():
    agents = {
        "agent_a": [answer(PLAN_TEXT), vote("agent_a", "complete"), f"Final plan:\n{json.dumps(PLAN)}"],
        "agent_b": [answer("Paris, no plan needed."), vote("agent_a", "a real plan")],
    }
    run = massgen("-c", config_file(agents), "--plan", "Note the capital of France.")
    assert run.exit_code == 0, run.stderr
    assert read_plan(run.stdout) == read_plan(PLAN_TEXT), "the final answer is the plan"
    assert "Plan mode: plan the task, do not carry it out" in system_prompt("agent_b")
    asked_again = [m["content"] for r in requests("agent_b") for m in r["messages"] if m["role"] == "user"]
    assert any("Plan mode: your answer holds no plan" in said for said in asked_again)
    assert not any(e["agent_id"] == "agent_b" and e["status"] == "answered" for e in events("AgentStatus"))
    (folder,) = (state_folder() / "plans").iterdir()
    kept = json.loads((folder / "plan.json").read_text())
    assert [task["id"] for task in kept["tasks"]] == ["T1", "T2"] and kept["tasks"][1]["depends_on"] == ["T1"]
    metadata = json.loads((folder / "metadata.json").read_text())
    assert (metadata["status"], metadata["winner"]) == ("planned", "agent_a")
    assert metadata["question"] == "Note the capital of France."
    assert f"plan {metadata['plan_id']}: 2 task(s) in 2 chunk(s), kept in {folder}" in run.stderr
    assert "C02 T2 [medium] Write it down (after T1) — verify: the note names Paris" in run.stderr
    (made,) = events("PlanMade")
    assert made["chunks"] == ["C01", "C02"] and made["folder"] == str(folder)


def test_plan_and_execute_runs_a_turn_per_chunk_with_the_tasks_seeded_and_prints_the_last_answer():
    solo = [
        json.dumps(PLAN),
        {"tool": "update_task_status", "args": {"task_id": "T1", "status": "completed"}},
        "T1 done: the capital is Paris.",
        {"tool": "update_task_status", "args": {"task_id": "T2", "status": "completed"}},
        "T2 done: noted, the capital of France is Paris.",
    ]
    run = massgen("-c", config_file({"solo": solo}), "--plan-and-execute", "Note the capital of France.")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == "T2 done: noted, the capital of France is Paris.", "the last chunk's answer"
    assert "T1 done: the capital is Paris." in run.stderr and '"tasks"' in run.stderr, "the rest on stderr"
    (folder,) = (state_folder() / "plans").iterdir()
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["status"] == "executed" and metadata["executed_chunks"] == {"C01": 2, "C02": 3}
    first_chunk = requests("solo", turn=2)[0]["messages"]
    assert "This turn covers chunk C01 (1 of 2)" in first_chunk[0]["content"]
    assert "T1 [high] Find the capital" in first_chunk[0]["content"]
    seeded = [m["content"] for m in first_chunk if m["role"] == "system" and "Your plan:" in m["content"]]
    assert seeded and "T1 [pending] Find the capital" in seeded[0] and "T2" not in seeded[0]
    second = system_prompt("solo", turn=3)
    assert "chunk C02 (2 of 2)" in second and "The chunks before it were done in earlier turns." in second
    assert "update_task_status" in requests("solo", turn=3)[0]["tools"], (
        "the planning tools are on in execution"
    )


def test_plan_and_execute_needs_a_question():
    run = massgen("-c", config_file({"solo": ["x"]}), "--plan-and-execute", stdin="")
    assert run.exit_code == 2 and "--plan-and-execute runs one question" in run.stderr


CRITERIA = {
    "criteria": [
        {"text": "Names Paris as the capital", "category": "primary", "verify_by": "the answer says Paris"},
        {"description": "Says it in one sentence", "category": "could"},
    ]
}


def vote_judged(target: str, verdicts: dict[str, bool]) -> dict[str, Any]:
    checklist = {"tool": "submit_checklist", "args": {"verdicts": verdicts}}
    return {**vote(target, "judged"), "calls": [checklist]}


def test_eval_criteria_shows_the_criteria_and_a_failing_vote_is_refused_once():
    Path("criteria.json").write_text(json.dumps(CRITERIA), encoding="utf-8")
    agents = {
        "agent_a": [
            answer("Paris is the capital of France."),
            vote_judged("agent1", {"E1": True, "E2": True}),
        ],
        "agent_b": [
            answer("Lyon is the capital of France."),
            vote_judged("agent2", {"E1": False, "E2": True}),
            vote_judged("agent1", {"E1": True, "E2": True}),
        ],
    }
    orchestrator = {
        "max_new_answers_per_agent": 1,
        "defer_voting_until_all_answered": True,
        "disable_injection": True,
        "skip_final_presentation": True,
    }
    config = config_file(agents, orchestrator=orchestrator)
    run = massgen("-c", config, "--eval-criteria", "criteria.json", "Capital of France?")
    assert run.exit_code == 0 and run.stdout.strip() == "Paris is the capital of France.", run.stderr
    prompt = system_prompt("agent_b")
    assert "E1 [primary] Names Paris as the capital (verify: the answer says Paris)" in prompt
    assert "E2 [stretch] Says it in one sentence" in prompt
    offered = requests("agent_b")[-1]["tools"]
    assert "submit_checklist" in offered and "vote" in offered
    asked_again = [m["content"] for r in requests("agent_b") for m in r["messages"] if m["role"] == "user"]
    assert any("fails E1 (Names Paris as the capital)" in said for said in asked_again)
    judged = [(e["agent_id"], e["unmet"], e["refused"]) for e in events("ChecklistJudged")]
    assert ("agent_b", ["E1"], True) in judged and ("agent_b", [], False) in judged
    assert "[agent_b] checklist: 1 met, unmet E1; vote refused, asked for a better answer" in run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["winner"] == "agent_a"
    assert {(v["voter"], v["target"]) for v in summary["votes"]} == {
        ("agent_a", "agent_a"),
        ("agent_b", "agent_a"),
    }


def test_eval_criteria_names_the_file_and_the_item_when_it_is_wrong():
    Path("bad.json").write_text(json.dumps([{"text": "ok"}, {"category": "primary"}]), encoding="utf-8")
    run = massgen("-c", config_file({"a": ["x"]}), "--eval-criteria", "bad.json", "Q?")
    assert run.exit_code == 2 and "--eval-criteria bad.json: item 2 text: is required" in run.stderr
    missing = massgen("-c", config_file({"a": ["x"]}), "--eval-criteria", "nowhere.json", "Q?")
    assert missing.exit_code == 2 and "--eval-criteria nowhere.json: cannot be read" in missing.stderr


def test_help_names_the_flags():
    said = " ".join(massgen("--help").stdout.split())
    for flag in ("--fast", "--plan", "--plan-and-execute", "--eval-criteria"):
        assert flag in said

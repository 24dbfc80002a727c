"""Task planning and skills, as MassGen's configs turn them on: plans made with the planning tools, seen by
peers, kept through a restart, in the workspace, the log and the session; skills found, listed and
loaded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from massgen_cli.attempts import AttemptAt
from massgen_cli.tools.base import ToolError
from massgen_cli.tools.planning import PlanBook, PlanSettings
from massgen_cli.tools.skills import discover_skills
from tests.scripted import answer, scripted, vote


def call(tool: str, **args: object) -> dict:
    return {"calls": [{"tool": tool, "args": args}]}


def test_a_plan_is_made_kept_through_a_restart_and_seen_by_a_peer(in_process, tmp_path: Path):
    planner = [
        call(
            "create_task_plan",
            tasks=[{"description": "find the capital"}, {"description": "check it", "depends_on": ["t1"]}],
        ),
        call("update_task_status", task_id="t1", status="completed", notes="Paris, from the atlas"),
        answer("Paris"),
        vote("agent1", "mine"),
    ]
    run = in_process(
        scripted(
            {"planner": planner, "peer": [vote("agent1", "good", delay=0.5)]},
            backends={"planner": {"cwd": "ws"}},
            orchestrator={
                "final_presentation": "reuse",
                "coordination": {"enable_agent_task_planning": True, "task_planning_filesystem_mode": True},
            },
        )
    )
    result = run.app.ask("What is the capital of France?")
    assert result.final_answer == "Paris"
    after_restart = run.requests("planner")[-1].messages
    own = next(m["content"] for m in after_restart if str(m.get("content", "")).startswith("=== TASK PLANS"))
    assert "Your plan:\n✓ t1 [completed] find the capital\n· t2 [pending] check it (after t1)" in own
    seen_by_peer = json.dumps(run.requests("peer")[-1].messages)
    assert "Plan of agent1:" in seen_by_peer and "find the capital" in seen_by_peer
    mirrored = json.loads((tmp_path / "ws" / "tasks" / "plan.json").read_text())
    assert mirrored["agent"] == "agent1" and mirrored["tasks"][0]["notes"] == ["Paris, from the atlas"]
    logged = json.loads((run.app.run_log.directory / "turn_1" / "attempt_1" / "plans.json").read_text())
    assert [task["status"] for task in logged["planner"]] == ["completed", "pending"]
    kept = json.loads((run.app.session.directory / "plans.json").read_text())
    assert kept["1"] == logged
    assert "create_task_plan" in {tool.name for tool in run.requests("peer")[0].tools}


def test_the_planning_tools_refuse_what_a_plan_cannot_hold():
    book = PlanBook(PlanSettings(max_tasks=2), {"a": "agent1"}, lambda event: None)
    book.begin(AttemptAt(1))
    tools = {tool.name: tool for tool in book.tools("a", None)}

    def run(name: str, **arguments: object) -> str:
        return asyncio.run(tools[name].run(dict(arguments)))

    with pytest.raises(ToolError, match="at most 2 tasks"):
        run("create_task_plan", tasks=[{"description": d} for d in ("one", "two", "three")])
    assert run("get_task_plan") == "You have no plan yet.", "a refused plan leaves none behind"
    run("create_task_plan", tasks=[{"description": "one"}])
    with pytest.raises(ToolError, match="already have a plan"):
        run("create_task_plan", tasks=[{"description": "again"}])
    with pytest.raises(ToolError, match="status must be one of"):
        run("update_task_status", task_id="t1", status="done")
    with pytest.raises(ToolError, match="no task t9"):
        run("add_task", description="two", depends_on=["t9"])
    run("add_task_note", task_id="t1", note="started")
    assert run("get_task_plan") == "· t1 [pending] one\n    note: started"
    book.begin(AttemptAt(2))
    assert run("get_task_plan") == "You have no plan yet.", "a new turn starts without plans"


def test_skills_are_found_listed_and_loaded(in_process, tmp_path: Path):
    skill = tmp_path / ".agent" / "skills" / "haiku"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: haiku\ndescription: Write a haiku.\n---\nFive, seven, five.\n"
    )
    (skill / "examples.md").write_text("An old silent pond")
    run = in_process(
        scripted(
            {"poet": [call("load_skill", name="haiku"), "Autumn moonlight"]},
            orchestrator={"coordination": {"use_skills": True, "massgen_skills": ["file-search"]}},
        )
    )
    assert run.app.ask("Write a haiku.").final_answer == "Autumn moonlight"
    first, second = run.requests("poet")
    system = first.messages[0]["content"]
    assert f"- haiku: Write a haiku. ({skill.resolve() / 'SKILL.md'})" in system
    assert "- file-search:" in system and "check-before-answering" not in system, "massgen_skills filters"
    loaded = second.messages[-1]["content"]
    assert loaded.startswith("---\nname: haiku") and "Five, seven, five." in loaded
    assert "examples.md" in loaded


PLANNING_IN_FILES = {"enable_agent_task_planning": True, "task_planning_filesystem_mode": True}


def test_a_plan_is_never_mirrored_through_a_link_the_agent_planted(in_process, tmp_path: Path):
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("the user's own\n")
    (tmp_path / "ws" / "tasks").mkdir(parents=True)
    (tmp_path / "ws" / "tasks" / "plan.json").symlink_to(bashrc)
    planner = [call("create_task_plan", tasks=[{"description": "plant a link"}]), answer("done")]
    run = in_process(
        scripted(
            {"planner": planner},
            backends={"planner": {"cwd": "ws"}},
            orchestrator={
                "coordination": {"enable_agent_task_planning": True, "task_planning_filesystem_mode": True}
            },
        )
    )
    assert run.app.ask("Plan it.").final_answer == "done"
    assert bashrc.read_text() == "the user's own\n"
    assert "plan not mirrored to tasks/plan.json" in run.err.getvalue()


def alias_bomb(levels: int) -> str:
    """YAML whose last list expands to 9 * 5**levels items through aliases."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 5)}]" for n in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def _leaves(value: object) -> int:
    return sum(_leaves(item) for item in value) if isinstance(value, list) else 1


def test_a_skill_whose_front_matter_is_an_alias_bomb_is_read_by_its_folder_name(tmp_path: Path):
    import yaml

    assert _leaves(yaml.safe_load(alias_bomb(3))["a3"]) == 9 * 5**3, "the plain loader expands aliases"
    folder = tmp_path / "skills" / "bomb"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{alias_bomb(12)}name: bomb\ndescription: boom\n---\nUse it.\n")
    (found,) = [skill for skill in discover_skills(tmp_path / "skills") if skill.origin == "project"]
    assert found.name == "bomb" and found.description == "", "the front matter is refused, the skill kept"

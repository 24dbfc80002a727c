"""Plans as plan mode reads them from an answer: fenced or bare JSON, MassGen's task fields, and a sentence
the agent can act on when the plan does not hold together."""

from __future__ import annotations

import json

import pytest

from massgen_cli.plans import PlanDesk, PlanProblem, PlanTask, keep_plan, read_plan


def plan_text(*tasks: dict[str, object]) -> str:
    return json.dumps({"tasks": list(tasks)})


def test_a_plan_is_read_fenced_or_bare_with_massgens_fields():
    tasks = [
        {"id": "F1", "description": "Lay out the page", "chunk": "C01_base", "priority": "HIGH"},
        {
            "id": "F2",
            "description": "Style it",
            "chunk": "C02_polish",
            "depends_on": ["F1"],
            "metadata": {"verification": "renders"},
        },
    ]
    fenced = read_plan(f"Here it is:\n```json\n{plan_text(*tasks)}\n```\nThat is all.")
    assert read_plan(f"Plan: {plan_text(*tasks)}") == fenced
    assert fenced.tasks == (
        PlanTask("F1", "Lay out the page", "C01_base", (), "high"),
        PlanTask("F2", "Style it", "C02_polish", ("F1",), "medium", "renders"),
    )
    assert fenced.chunks() == ["C01_base", "C02_polish"] and fenced.of_chunk("C02_polish")[0].id == "F2"
    assert fenced.document()["tasks"][1] == {
        "id": "F2",
        "description": "Style it",
        "chunk": "C02_polish",
        "depends_on": ["F1"],
        "priority": "medium",
        "verification": "renders",
        "status": "pending",
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Just do it.", "your answer holds no plan"),
        ('{"tasks": []}', "'tasks' must be a non-empty list"),
        (plan_text({"id": "T1"}), "task 1 needs an 'id' and a 'description'"),
        (plan_text({"id": "T1", "description": "a"}, {"id": "T1", "description": "b"}), "share the id 'T1'"),
        (plan_text({"id": "T1", "description": "a", "depends_on": ["T9"]}), "depends on 'T9', which is no"),
        (
            plan_text(
                {"id": "T1", "description": "a", "chunk": "C01", "depends_on": ["T2"]},
                {"id": "T2", "description": "b", "chunk": "C02"},
            ),
            "comes in a later chunk",
        ),
        (
            plan_text(
                {"id": "T1", "description": "a", "depends_on": ["T2"]},
                {"id": "T2", "description": "b", "depends_on": ["T1"]},
            ),
            "in a circle: ['T1', 'T2']",
        ),
    ],
)
def test_a_plan_that_does_not_hold_together_says_why(text, problem):
    with pytest.raises(PlanProblem, match=problem.replace("[", r"\[").replace("]", r"\]")):
        read_plan(text)


def test_a_kept_plan_records_the_chunks_executed(tmp_path):
    plan = read_plan(
        plan_text(
            {"id": "T1", "description": "a", "chunk": "C01"}, {"id": "T2", "description": "b", "chunk": "C02"}
        )
    )
    kept = keep_plan(tmp_path, plan, {"question": "Q?", "turn": 1})
    assert kept.folder is not None and kept.folder.parent == tmp_path / "plans"
    assert json.loads((kept.folder / "plan.json").read_text()) == plan.document()
    desk = PlanDesk()
    for turn, chunk in enumerate(plan.chunks(), 2):
        desk.execute(kept, chunk)
        desk.chunk_done(turn)
        metadata = json.loads((kept.folder / "metadata.json").read_text())
        assert metadata["executed_chunks"] == dict(list({"C01": 2, "C02": 3}.items())[: turn - 1])
    assert metadata["status"] == "executed" and metadata["question"] == "Q?"

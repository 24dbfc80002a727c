"""Subagents run for real: agents of the shipped scripted backend hand tasks to nested teams of scripted
agents, through the library; their answers come back as the tool's result, their bounds stop them, and
their work outlives the spawning agent's restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import massgen_cli
from massgen_cli.events import AgentStatus, RunEvent
from massgen_cli.feature_events import SubagentFinished, SubagentStarted
from massgen_cli.runlogs.account import account
from massgen_cli.runlogs.reader import all_runs
from tests.scripted import answer, scripted, vote

RESULT_ANSWER = r'"answer": "[^"]*"'
RESULT_STATUS = r'"status": "\w+"'


def spawn(*tasks: str, **entry: Any) -> dict[str, Any]:
    return {"tool": "spawn_subagents", "args": {"tasks": [{"task": task} for task in tasks]}, **entry}


def echo(pattern: str) -> dict[str, Any]:
    return {"text": "{echo}", "echo": pattern}


def config(agents: dict[str, list[Any]], helpers: list[Any], **coordination: Any) -> dict[str, Any]:
    """Scripted ``agents`` with workspaces, whose subagents run one scripted helper saying ``helpers``."""
    team = {"agents": [{"id": "helper", "backend": {"type": "scripted", "responses": helpers}}]}
    settings = {"enable_subagents": True, "subagent_orchestrator": team, **coordination}
    backends = {agent_id: {"cwd": f"ws_{agent_id}"} for agent_id in agents}
    orchestrator = {"coordination": settings}
    return yaml.safe_load(scripted(agents, backends=backends, orchestrator=orchestrator))


def run(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[RunEvent]]:
    monkeypatch.chdir(tmp_path)
    events: list[RunEvent] = []
    result = massgen_cli.run(document, "Plan the trip.", state_dir=tmp_path / "state", on_event=events.append)
    return result.answer or "", events


def of(kind: type, events: list[RunEvent]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def test_a_subagent_returns_its_answer_within_its_bounds(tmp_path, monkeypatch):
    document = config(
        {"lead": [spawn("Find the capital of France."), echo(RESULT_ANSWER)]}, ["Paris is the capital."]
    )
    answer_text, events = run(document, tmp_path, monkeypatch)
    assert answer_text == '"answer": "Paris is the capital."', "the lead read the subagent's answer"
    (started,) = of(SubagentStarted, events)
    (finished,) = of(SubagentFinished, events)
    assert (started.agent_id, started.depth, started.task) == ("lead", 1, "Find the capital of France.")
    assert (finished.status, finished.answer, finished.subagent_id) == (
        "completed",
        "Paris is the capital.",
        started.subagent_id,
    )
    folder = tmp_path / "ws_lead" / "subagents" / started.subagent_id
    assert Path(finished.workspace) == folder / "workspace" and (folder / "workspace").is_dir()
    kept = json.loads((folder / "result.json").read_text())
    assert (kept["status"], kept["answer"]) == ("completed", "Paris is the capital.")
    assert Path(finished.log_folder).is_dir(), "the subagent's own run log is kept"
    told = "\n".join(account(all_runs(tmp_path / "state")))
    assert f"subagent {started.subagent_id} completed: Paris is the capital." in told


def test_a_subagent_past_its_time_limit_is_stopped_and_said_so(tmp_path, monkeypatch):
    slow = [{"text": "never in time", "delay": 120}]
    document = config(
        {"lead": [spawn("Count the stars."), echo(RESULT_STATUS)]},
        slow,
        subagent_default_timeout=1,
        subagent_min_timeout=0.5,
    )
    answer_text, events = run(document, tmp_path, monkeypatch)
    assert answer_text == '"status": "timeout"'
    (finished,) = of(SubagentFinished, events)
    assert finished.status == "timeout" and finished.reason == "its time limit of 1s ran out"
    assert finished.answer == ""


def test_a_subagent_cannot_spawn_beyond_the_max_depth(tmp_path, monkeypatch):
    deeper = [spawn("Go deeper.", text="no deeper subagent")]
    shallow = config({"lead": [spawn("Look around."), echo(RESULT_ANSWER)]}, deeper)
    answer_text, events = run(shallow, tmp_path, monkeypatch)
    assert answer_text == '"answer": "no deeper subagent"', "at depth 1 the helper is offered no spawn tool"
    (started,) = of(SubagentStarted, events)
    nested = tmp_path / "ws_lead" / "subagents" / started.subagent_id / "workspace" / "subagents"
    assert not nested.exists()

    deep = config({"lead": [spawn("Look around."), echo(RESULT_STATUS)]}, deeper, subagent_max_depth=2)
    (tmp_path / "deep").mkdir()
    run(deep, tmp_path / "deep", monkeypatch)
    grandchildren = list((tmp_path / "deep").rglob("result.json"))
    assert len(grandchildren) == 2, "with depth 2 the helper spawned once more, and no further"


def test_a_subagents_work_is_kept_when_its_agent_restarts(tmp_path, monkeypatch):
    task = "Find the capital of France."
    agents = {
        "a": [
            spawn(task),
            spawn(task),
            answer("Paris, as my subagent found."),
            vote("a", "it asked"),
        ],
        "b": [answer("B's guess"), vote("a", "better"), vote("a", "better")],
    }
    document = config(agents, [{"text": "Paris.", "delay": 2}])
    answer_text, events = run(document, tmp_path, monkeypatch)
    restarts = [e for e in of(AgentStatus, events) if e.agent_id == "a" and e.status == "restarted"]
    assert restarts, "b's new answer restarted a while its subagent worked"
    assert len(of(SubagentStarted, events)) == 1, (
        "after the restart a got the same run's result, not a second run"
    )
    (finished,) = of(SubagentFinished, events)
    assert finished.status == "completed"
    assert answer_text == "Paris, as my subagent found."
    sent = [json.loads(path.read_text()) for path in (tmp_path / "state").rglob("requests/a_*.json")]
    results = [m["content"] for r in sent for m in r["messages"] if m.get("name") == "spawn_subagents"]
    assert len(results) == 1 and '"answer": "Paris."' in results[0], "the restarted step read the kept answer"

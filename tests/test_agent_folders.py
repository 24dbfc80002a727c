"""The runner's writes into an agent's folder never go through a link: a planted symbolic link, a link
on the way or a hard link to the user's file is refused and the user's file stays as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from massgen_cli.agent_folders import LinkRefused, write_inside


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    outside = tmp_path / "home" / ".bashrc"
    outside.parent.mkdir()
    outside.write_text("the user's own\n")
    return outside


def test_a_plain_path_is_written_and_its_folders_made(tmp_path: Path):
    write_inside(tmp_path, "tasks/plan.json", "{}")
    write_inside(tmp_path, "tasks/plan.json", "[]")
    assert (tmp_path / "tasks" / "plan.json").read_text() == "[]"


def test_a_planted_link_is_refused(tmp_path: Path, precious: Path):
    workspace = tmp_path / "ws"
    (workspace / "tasks").mkdir(parents=True)
    (workspace / "tasks" / "plan.json").symlink_to(precious)
    with open(workspace / "tasks" / "plan.json", "a") as followed:  # what a plain write does: follows it
        assert followed.name and precious.read_text() == "the user's own\n"
    with pytest.raises(LinkRefused):
        write_inside(workspace, "tasks/plan.json", "overwritten")
    assert precious.read_text() == "the user's own\n"


def test_a_link_on_the_way_and_a_hard_link_are_refused(tmp_path: Path, precious: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "tasks").symlink_to(precious.parent, target_is_directory=True)
    with pytest.raises(LinkRefused):
        write_inside(workspace, "tasks/.bashrc", "overwritten")
    (workspace / "tasks").unlink()
    (workspace / "tasks").mkdir()
    os.link(precious, workspace / "tasks" / "plan.json")
    with pytest.raises(LinkRefused):
        write_inside(workspace, "tasks/plan.json", "overwritten")
    assert precious.read_text() == "the user's own\n"


@pytest.mark.parametrize("relative", ["/etc/passwd", "../outside.json", "tasks/../../outside.json", ""])
def test_a_path_that_leaves_the_folder_is_no_path_inside(tmp_path: Path, relative: str):
    with pytest.raises(ValueError):
        write_inside(tmp_path, relative, "x")

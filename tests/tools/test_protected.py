"""What the user runs without reading it stays as it was after an agent's sandboxed commands, with real
commands in real bubblewrap: a command cannot move ``.git`` (or a nested repository's, or a virtualenv)
aside and make its own in its place, cannot add a ``.pth`` file to a virtualenv, and a ``.envrc`` or a
git ``commondir`` it makes is removed when it ends. As the user running the tests and, when that is
root, as an ordinary user too. The file tools refuse the same places."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

import pytest

from massgen_cli.tools.base import ToolError
from massgen_cli.tools.commands import Confinement, SandboxSettings, run_command
from massgen_cli.tools.paths import Root, Roots
from massgen_cli.tools.protected import guard, protected_place

ROOT_DIR = Path(__file__).parents[2]
NOBODY = 65534
SITE_PACKAGES = ".venv/lib/python3.11/site-packages"
FORMS = {
    "git swapped": "mv .git .git_orig && mkdir -p .git/hooks && echo '[core] fsmonitor = touch pwned' > "
    ".git/config && echo 'touch pwned' > .git/hooks/pre-commit",
    "git rewritten": "echo 'touch pwned' > .git/hooks/pre-commit; echo '[core] fsmonitor = touch pwned' >> "
    ".git/config; rm -f .git/config",
    "git redirected": "mkdir -p evil/hooks && echo 'touch pwned' > evil/hooks/pre-commit && echo evil > "
    ".git/commondir",
    "venv bin swapped": "mv .venv/bin .venv/bin_orig && mkdir .venv/bin && echo 'touch pwned' > "
    ".venv/bin/activate",
    "venv swapped": "mv .venv .venv_orig && mkdir -p .venv/bin && echo 'touch pwned' > .venv/bin/activate",
    "pth planted": f"echo 'import os; os.system(\"touch pwned\")' > {SITE_PACKAGES}/evil.pth",
    "envrc made": "echo 'touch pwned' > .envrc && mkdir -p deeper && echo 'touch pwned' > deeper/.envrc",
    "nested hooks": "echo 'touch pwned' > sub/.git/hooks/pre-commit",
    "nested git swapped": "mv sub/.git sub/.git_orig && mkdir -p sub/.git/hooks && echo 'touch pwned' > "
    "sub/.git/hooks/pre-commit",
    "nested repository moved": "mv sub sub_orig && mkdir -p sub/.git/hooks && echo 'touch pwned' > "
    "sub/.git/hooks/pre-commit",
    "submodule hooks": "echo 'touch pwned' > .git/modules/lib/hooks/post-checkout",
    "gitlink redirected": "mkdir -p mine/hooks && echo 'gitdir: ../mine' > lib/.git",
}


def project(folder: Path) -> dict[str, str]:
    """A user's project: a repository with a submodule and a nested repository, and a virtualenv."""
    files = {
        ".git/config": "[core]\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
        ".git/modules/lib/HEAD": "ref: refs/heads/main\n",
        ".git/modules/lib/config": "[core]\n",
        ".git/modules/lib/hooks/post-checkout.sample": "#!/bin/sh\n",
        "lib/.git": "gitdir: ../.git/modules/lib\n",
        "sub/.git/config": "[core]\n",
        "sub/.git/hooks/pre-commit.sample": "#!/bin/sh\n",
        ".venv/bin/activate": "# activate\n",
        ".venv/pyvenv.cfg": "home = /usr/bin\n",
        f"{SITE_PACKAGES}/site.pth": "/usr/lib\n",
        "notes.md": "notes\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return tree(folder)


def tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a file's text, a folder as ``/``, a link as ``-> target``."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        else:
            found[name] = "/" if path.is_dir() else path.read_text()
    return found


def in_sandbox(workspace: Path, command: str) -> str:
    confinement = Confinement(Roots(workspace, (Root.of(workspace, writable=True),)), SandboxSettings())
    return asyncio.run(run_command(confinement, command, 60)).text


RUNNER = """
import asyncio, sys
sys.path[:0] = sys.argv[3:]
from pathlib import Path
from massgen_cli.tools.commands import Confinement, SandboxSettings, run_command
from massgen_cli.tools.paths import Root, Roots
workspace = Path(sys.argv[1])
confinement = Confinement(Roots(workspace, (Root.of(workspace, writable=True),)), SandboxSettings())
print(asyncio.run(run_command(confinement, sys.argv[2], 60)).text)
"""


def system_python() -> str | None:
    """The system's python3 when it is this interpreter's version (the test's may lie in a folder only
    root may enter): it runs the runner with this one's packages."""
    found = shutil.which("python3", path="/usr/bin:/bin")
    if found is None:
        return None
    version = subprocess.run(
        [found, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True, check=False
    )
    return found if version.stdout.strip() == str(sys.version_info[:2]) else None


def as_nobody(workspace: Path, command: str) -> str:
    """The command run by a runner that is an ordinary user (no capabilities, uid 65534)."""
    setpriv, python = shutil.which("setpriv"), system_python()
    assert setpriv is not None and python is not None
    ordinary = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
    packages = Path(pytest.__file__).parents[1]
    done = subprocess.run(
        [*ordinary, python, "-I", "-c", RUNNER, str(workspace), command, str(ROOT_DIR), str(packages)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workspace,
        env={**os.environ, "HOME": str(workspace.parent)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def runners() -> Iterator[str]:
    yield "as this user"
    if os.geteuid() == 0:
        yield "as an ordinary user"


@pytest.fixture(params=list(runners()))
def run_as(request: pytest.FixtureRequest) -> Iterator[tuple[Path, Callable[[Path, str], str]]]:
    """A folder the runner may use and how to run a command in it, as this user or (root only) as an
    ordinary one."""
    if request.param == "as this user":
        folder = Path(tempfile.mkdtemp())
        yield folder, in_sandbox
    else:
        if shutil.which("setpriv") is None or system_python() is None:
            pytest.skip(
                "becoming an ordinary user takes setpriv (util-linux) and a system python3 of this version"
            )
        folder = Path(tempfile.mkdtemp())
        folder.chmod(0o755)
        yield folder, as_nobody
    shutil.rmtree(folder, ignore_errors=True)


def own(folder: Path) -> None:
    """``folder`` and all in it belong to the ordinary user when the runner will be one."""
    if folder.stat().st_uid == os.geteuid() and os.geteuid() == 0:
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)


@pytest.mark.parametrize("form", FORMS)
def test_what_the_user_runs_unread_cannot_be_swapped_rewritten_or_planted(
    run_as: tuple[Path, Callable[[Path, str], str]], form: str
):
    folder, run = run_as
    workspace = folder / "ws"
    workspace.mkdir()
    before = project(workspace)
    if run is as_nobody:
        own(folder)
    said = run(workspace, f"{FORMS[form]}; echo mine > mine.txt; echo ran")
    assert "ran" in said, said
    after = tree(workspace)
    assert after.pop("mine.txt") == "mine\n", "the rest of the workspace stays writable"
    for made in ("evil", "evil/hooks", "evil/hooks/pre-commit", "deeper", "mine", "mine/hooks"):
        after.pop(made, None)  # the command's own folders
    assert after == before, said
    if form in ("envrc made", "git redirected"):
        assert "[removed what the command made where the user runs files unread" in said, said


def test_the_guard_finds_every_place_and_pins_the_folders_above_them(tmp_path: Path):
    project(tmp_path)
    (tmp_path / ".envrc").write_text("export A=1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "sub")
    kept = guard(tmp_path)
    names = {str(path.relative_to(tmp_path)) for path in kept.read_only}
    assert names == {
        ".envrc",
        ".venv",
        ".git/config",
        ".git/hooks",
        ".git/modules/lib/config",
        ".git/modules/lib/hooks",
        "lib/.git",
        "sub/.git/config",
        "sub/.git/hooks",
    }
    pinned = {str(path.relative_to(tmp_path)) for path in kept.pinned}
    assert pinned == {".git", ".git/modules", ".git/modules/lib", "lib", "sub", "sub/.git"}
    absent = {str(path.relative_to(tmp_path)) for path in kept.absent}
    assert absent == {".git/commondir", ".git/modules/lib/commondir", "sub/.git/commondir"}
    assert guard(tmp_path, skip=[tmp_path / "sub"]).read_only == tuple(
        path for path in kept.read_only if not path.is_relative_to(tmp_path / "sub")
    )


@pytest.mark.parametrize(
    "path",
    [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/commondir",
        "sub/.git/hooks/pre-commit",
        ".git/modules/lib/config",
        "lib/.git",
        ".venv/bin/activate",
        ".venv/lib/python3.11/site-packages/evil.pth",
        "venv/pyvenv.cfg",
        ".envrc",
        "deeper/.envrc",
    ],
)
def test_the_file_tools_refuse_each_place(tmp_path: Path, path: str):
    roots = Roots(tmp_path, (Root.of(tmp_path, writable=True),))
    with pytest.raises(ToolError, match="is protected"):
        roots.confine(path, write=True)
    assert protected_place(PurePosixPath(path))


@pytest.mark.parametrize("path", ["notes.md", "git/config", "src/venv.py", "docs/hooks/x", ".github/x"])
def test_the_file_tools_write_elsewhere(tmp_path: Path, path: str):
    roots = Roots(tmp_path, (Root.of(tmp_path, writable=True),))
    assert roots.confine(path, write=True) == tmp_path / path

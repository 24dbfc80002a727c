"""execute_command runs real processes (in the sandbox, and unconfined where the config says so): exit
codes and output, a timeout that kills all the command started, cancellation that does too, command
patterns, and no secrets in the command's environment."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from massgen_cli.config import load_config
from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.events import ToolCall
from massgen_cli.tools import reaper
from massgen_cli.tools.command_policy import CommandPolicy
from massgen_cli.tools.commands import Confinement, SandboxSettings, command_tool
from massgen_cli.tools.paths import Root, Roots
from massgen_cli.tools.toolbox import Toolbox, build_toolbox
from tests.conftest import processes_with, spawn_waiting_child, wait_until

MODES = [SandboxSettings(), None]
"""Each test runs in the sandbox and unconfined (``local_unsandboxed``)."""


def toolbox(
    workspace: Path,
    timeout_s: float = 30.0,
    allowed: list[str] | None = None,
    blocked: list[str] | None = None,
    sandbox: SandboxSettings | None = MODES[0],
) -> Toolbox:
    confinement = Confinement(Roots(workspace, (Root.of(workspace, writable=True),)), sandbox)
    tool = command_tool(confinement, CommandPolicy.of(allowed, blocked), timeout_s)
    return Toolbox({tool.name: tool}, call_timeout_s=timeout_s + 5)


def run(box: Toolbox, **arguments: object):  # type: ignore[no-untyped-def]
    return asyncio.run(box.run(ToolCall("c", "execute_command", dict(arguments))))


@pytest.mark.parametrize("sandbox", MODES, ids=["sandbox", "unsandboxed"])
def test_runs_in_the_workspace_with_exit_code_and_output(tmp_path: Path, sandbox: SandboxSettings | None):
    (tmp_path / "data.txt").write_text("hello\n")
    result = run(toolbox(tmp_path, sandbox=sandbox), command="cat data.txt; echo oops >&2; exit 3")
    assert result.ok
    assert result.text.splitlines() == ["exit code: 3", "hello", "oops"]


@pytest.mark.parametrize("sandbox", MODES, ids=["sandbox", "unsandboxed"])
def test_timeout_kills_the_command_and_its_children(tmp_path: Path, sandbox: SandboxSettings | None):
    command, marker = spawn_waiting_child()
    result = run(toolbox(tmp_path, sandbox=sandbox), command=command, timeout_seconds=1.5)
    assert not result.ok and "timed out after 1.5s" in result.text
    assert (tmp_path / "child.pid").read_text().strip(), "the child was started"
    wait_until(lambda: not processes_with(marker))


@pytest.mark.parametrize("sandbox", MODES, ids=["sandbox", "unsandboxed"])
def test_cancelling_the_call_kills_the_process_group(tmp_path: Path, sandbox: SandboxSettings | None):
    box = toolbox(tmp_path, sandbox=sandbox)
    command, marker = spawn_waiting_child()

    async def cancel_midway() -> None:
        task = asyncio.create_task(box.run(ToolCall("c", "execute_command", {"command": command})))
        pid_file = tmp_path / "child.pid"
        await asyncio.to_thread(wait_until, lambda: pid_file.exists() and pid_file.read_text().strip() != "")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    wait_until(lambda: not processes_with(marker))


def test_output_is_bounded(tmp_path: Path):
    result = run(toolbox(tmp_path), command="yes y | head -c 100000")
    assert "bytes of output not shown" in result.text and len(result.text) < 13_000


def test_allowed_and_blocked_patterns(tmp_path: Path):
    box = toolbox(tmp_path, allowed=[r"echo\b", r"ls\b"], blocked=[r"echo\s+secret"])
    assert run(box, command="echo hi").ok
    blocked = run(box, command="echo secret")
    assert not blocked.ok and "blocked pattern" in blocked.text
    refused = run(box, command="rm -rf /tmp/nothing")
    assert not refused.ok and "none of the allowed patterns" in refused.text


@pytest.mark.parametrize("sandbox", MODES, ids=["sandbox", "unsandboxed"])
def test_secrets_are_not_in_the_command_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxSettings | None
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-planted")
    result = run(toolbox(tmp_path, sandbox=sandbox), command="env")
    assert "sk-planted-secret" not in result.text and "tok-planted" not in result.text
    assert "PATH=" in result.text


def test_config_gives_the_tool_and_docker_mode_runs_in_the_os_sandbox(tmp_path: Path):
    """MassGen's docker mode (42 of its example configs) was refused without a daemon and not built with
    one: its commands run in the OS sandbox, and the config's warning says what differs."""
    backend = {"type": "scripted", "responses": ["x"], "cwd": "ws", "enable_mcp_command_line": True}
    agent = AgentConfig.model_validate({"id": "a", "backend": backend})
    assert "execute_command" in build_toolbox(agent, 0, OrchestratorConfig())
    config = tmp_path / "docker.yaml"
    docker_backend = {**backend, "command_line_execution_mode": "docker", "command_line_docker_image": "x"}
    config.write_text(json.dumps({"agent": {"id": "a", "backend": docker_backend}}))
    loaded = load_config(config)
    assert loaded.config.agents[0].backend.command_line_execution_mode == "local"
    assert any("no container engine is driven here" in warning for warning in loaded.warnings)
    box = build_toolbox(loaded.config.agents[0], 0, OrchestratorConfig())
    result = asyncio.run(box.run(ToolCall("c", "execute_command", {"command": "echo in the sandbox"})))
    assert result.ok and result.text.endswith("in the sandbox\n")


def _kill_parent_command(marker: str) -> str:
    """A command that starts a child in a session of its own, then kills its parent with SIGKILL."""
    return f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & kill -9 $PPID; echo still-here; exit 3"


def test_an_unsandboxed_command_that_kills_its_parent_leaves_nothing_behind(tmp_path: Path):
    """The reaper's parent-kill hole: ``kill -9 $PPID`` used to kill the reaper, and the ``setsid``
    child lived on after the run. As root the command runs in a PID namespace of its own, whose first
    process nothing inside can kill (the command goes on to its own exit code); either way nothing it
    started outlives it."""
    marker = spawn_waiting_child()[1]
    result = run(toolbox(tmp_path, sandbox=None), command=_kill_parent_command(marker))
    if os.geteuid() == 0:
        assert result.ok and result.text.splitlines() == ["exit code: 3", "still-here"], result.text
    wait_until(lambda: not processes_with(marker))


def test_as_an_ordinary_user_a_command_that_kills_its_parent_leaves_nothing_behind():
    """The same attack by a user with no privileges (no PID namespace): the kill ends the command's
    first process, and the reaper, whose parent is alive, kills what the command left."""
    setpriv, python = shutil.which("setpriv"), shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or setpriv is None or python is None:
        pytest.skip("needs root to become an ordinary user, setpriv (util-linux) and a system python3")
    folder = Path(tempfile.mkdtemp())  # readable by the ordinary user, unlike the test's tmp_path
    try:
        folder.chmod(0o755)
        script = folder / "reaper.py"
        shutil.copy(reaper.__file__, script)
        script.chmod(0o644)
        marker = spawn_waiting_child()[1]
        ordinary = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
        program = ["/bin/sh", "-c", _kill_parent_command(marker)]
        done = subprocess.run(
            [*ordinary, python, "-I", "-S", str(script), str(os.getpid()), reaper.OWN_PIDS, *program],
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 128 + signal.SIGKILL, done.stderr  # its first process was killed
        wait_until(lambda: not processes_with(marker))
    finally:
        shutil.rmtree(folder)


def test_no_file_a_sandboxed_command_marks_set_id_keeps_the_bit(tmp_path: Path):
    """A command that copies a shell into its workspace and marks it set-user-ID (a root shell any local
    user could run, once the run is over, when the runner is root) leaves it without the bit, and the
    result says so; the earlier sandbox left the bit in place."""
    marking = "cp /bin/sh kept-shell && chmod u+s,g+s kept-shell && echo marked"
    result = run(toolbox(tmp_path), command=marking)
    assert result.ok and "marked" in result.text, result.text
    mode = (tmp_path / "kept-shell").stat().st_mode
    assert not mode & (stat.S_ISUID | stat.S_ISGID) and mode & stat.S_IXUSR
    assert "set-user/group-ID bits cleared on 1 file(s)" in result.text and "kept-shell" in result.text

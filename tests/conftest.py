"""Shared fixtures: an isolated state folder and environment, and helpers to run massgen."""

from __future__ import annotations

import io
import os
import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from massgen_cli.agent.shared_limits import forget_shared_limits
from massgen_cli.app import MassGenApp
from massgen_cli.config import load_document
from massgen_cli.ui import ConsoleView
from tests.cli.in_process_cli import massgen, settle_heap

PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real provider key, state (and the user's list of state folders) under tmp_path, current folder
    tmp_path (no stray .env)."""
    for key in PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MASSGEN_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "user-state"))  # the user's list of state folders
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.chdir(tmp_path)
    forget_shared_limits()  # a provider's budget and breaker, shared in a process, start afresh per test
    return tmp_path


def write_config(directory: Path, text: str, name: str = "config.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run_cli(
    *args: str, stdin: str | None = None, timeout: float = 120, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` with the test's environment: in this process (the same command line, app and
    exit code, without an interpreter's start and its imports), or with ``process`` in a subprocess of
    its own, where signals, locks held by a process or a process's exit are the point."""
    if process:
        return run_cli_process(*args, stdin=stdin, timeout=timeout)
    return run_cli_here(*args, stdin=stdin)


def run_cli_process(
    *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` in a subprocess, with the test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "massgen_cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
        check=False,
    )


def run_cli_here(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` in this process (see ``tests/cli/in_process_cli.py``), as a finished process."""
    result = massgen(*args, stdin=stdin)
    return subprocess.CompletedProcess(["massgen", *args], result.exit_code, result.stdout, result.stderr)


def spawn_waiting_child() -> tuple[str, str]:
    """A shell command that starts a child sleeping for days in the background, writes ./child.pid once
    it has, and waits for it: what a kill of all a command started must reach. Also the child's marker
    (its sleep argument), which finds it in /proc from outside a sandbox's PID namespace."""
    marker = f"{86400 + secrets.randbelow(10**6)}.5"
    return f"sleep {marker} & echo $! > child.pid; wait", marker


def processes_with(argument: str) -> list[int]:
    """The ids of the live processes that have ``argument`` among their arguments."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argument.encode() in arguments and not process_gone(int(entry.name), within_s=0):
            found.append(int(entry.name))
    return found


def state_folder() -> Path:
    """The test's state folder (``MASSGEN_HOME``)."""
    return Path(os.environ["MASSGEN_HOME"])


def first_attempt_folder(turn: int = 1) -> Path:
    """The log folder of the first attempt of ``turn`` in the test's (one) run."""
    return next((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir()) / f"turn_{turn}" / "attempt_1"


def events_text(turn: int = 1) -> str:
    """Every event logged so far in the first attempt of ``turn`` (of any run), as text."""
    logs = Path(os.environ["MASSGEN_HOME"]) / "massgen_logs"
    return "".join(path.read_text() for path in logs.glob(f"*/turn_{turn}/attempt_1/events.jsonl"))


def wait_until(condition, within_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Return once ``condition()`` holds; fail when it does not within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {within_s:g}s: {condition}")
        time.sleep(0.02)


def process_gone(pid: int, within_s: float = 30.0) -> bool:
    """Whether process ``pid`` is gone (or a zombie) before ``within_s`` seconds pass."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in "ZX":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


class InProcessRun:
    """An app built from YAML text, with its stdout and stderr captured."""

    def __init__(
        self, directory: Path, text: str, *, session_id: str | None = None, interactive: bool = False
    ):
        settle_heap()
        path = write_config(directory, text)
        self.out, self.err = io.StringIO(), io.StringIO()
        loaded = load_document(yaml.safe_load(path.read_text()), path)
        console = Console(file=self.err, width=200, highlight=False)
        self.app = MassGenApp(
            loaded,
            listeners=(ConsoleView(loaded.config.agent_ids, console=console, out=self.out),),
            state_dir=Path(os.environ["MASSGEN_HOME"]),
            session_id=session_id,
            interactive=interactive,
        )

    def requests(self, agent_id: str):  # type: ignore[no-untyped-def]
        """What the scripted backend of ``agent_id`` received, in order."""
        agent = next(a for a in self.app.agents if a.id == agent_id)
        return agent.backend.inner.requests  # type: ignore[attr-defined]


@pytest.fixture
def in_process(tmp_path: Path):  # type: ignore[no-untyped-def]
    runs: list[InProcessRun] = []

    def build(text: str, **kwargs) -> InProcessRun:  # type: ignore[no-untyped-def]
        run = InProcessRun(tmp_path, text, **kwargs)
        runs.append(run)
        return run

    yield build
    for run in runs:
        run.app.close()


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """Connection string of a database with the vector extension; the server stops after the run."""
    from tests.servers.postgres import start_postgres

    server = start_postgres()
    try:
        yield server.url
    finally:
        server.stop()

"""Servers for the tests of ``massgen serve``: the command itself in a subprocess (its address read from
the line it prints), or the app on uvicorn in a thread of the test; configs of scripted agents they serve;
and reading a served session's run logs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

from massgen_cli.serve.api import ServerSettings, create_app
from massgen_cli.serve.command import listen
from massgen_cli.serve.models import ServedModels
from tests.conftest import PROVIDER_KEYS, process_gone, wait_until

FUNCTIONS = str(Path(__file__).resolve().parents[1] / "tools" / "custom_functions.py")
TOKEN_VARIABLE = "MASSGEN_SERVE_TEST_TOKEN"
ANNOUNCED = re.compile(r"massgen serve: (http://127\.0\.0\.1:\d+/v1)")


def echo_agent(*first: dict[str, Any]) -> str:
    """One scripted agent that answers with the codeword it finds in what it was sent, newest message
    first: a codeword it answers in a later turn came from the session's memory. ``first``: its replies
    before that one."""
    replies = [*first, {"echo": "codeword-[a-z]+", "text": "You said {echo}."}]
    backend = {"type": "scripted", "responses": replies}
    if first:
        tool = {"name": "wait_for_file", "function": "wait_for_file", "path": FUNCTIONS}
        backend["custom_tools"] = [tool]
    return json.dumps({"agents": [{"id": "echo", "backend": backend}]})


def gated_agent(gate: Path) -> str:
    """The echo agent, which first waits (in a tool call) until ``gate`` is written."""
    return echo_agent({"tool": "custom_tool__wait_for_file", "args": {"path": str(gate)}})


SLOW_AGENT = json.dumps(
    {"agents": [{"id": "slow", "backend": {"type": "scripted", "responses": [
        {"text": "Working on it.", "delay": 600}
    ]}}]}
)  # fmt: skip
"""One agent that streams a line, then works for ten minutes: a turn to cancel."""
BROKEN_AGENT = json.dumps(
    {
        "agents": [
            {"id": "broken", "backend": {"type": "scripted", "responses": [{"error": "context_length"}]}}
        ]
    }
)
"""One agent whose every call fails: a turn without an answer."""


def write_configs(folder: Path, configs: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in configs.items():
        path = folder / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def server_environment(folder: Path, more: dict[str, str]) -> dict[str, str]:
    """The environment a served process gets: no provider key, state and the user's list of state
    folders under ``folder``, and ``more``."""
    environment = {k: v for k, v in os.environ.items() if k not in PROVIDER_KEYS and k != TOKEN_VARIABLE}
    environment |= {
        "MASSGEN_HOME": str(folder / "state"),
        "XDG_STATE_HOME": str(folder / "user-state"),
        "MEM0_TELEMETRY": "False",
    }
    return environment | more


class ServedProcess:
    """``massgen serve ARGS`` in a subprocess on a free port of 127.0.0.1, working in ``folder``, with
    ``environment`` added to the test's."""

    def __init__(self, folder: Path, *args: str, environment: dict[str, str] | None = None):
        self.folder, self.state = folder, folder / "state"
        self.stderr_path = folder / "serve.stderr"
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "massgen_cli", "serve", "--port", "0", *args],
                cwd=folder,
                env=server_environment(folder, environment or {}),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        wait_until(lambda: self._announced() or self.process.poll() is not None, within_s=120)
        found = self._announced()
        assert found, f"the server did not start: {self.stderr()}"
        self.url = found.group(1)

    def _announced(self) -> re.Match[str] | None:
        return ANNOUNCED.search(self.stderr())

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> int:
        """SIGTERM, then the exit code (SIGKILL if it has not ended within a minute)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            if not process_gone(self.process.pid, within_s=60):
                self.process.kill()
        return self.process.wait(timeout=60)


class ServedInThread:
    """The app on uvicorn in a thread of the test (no signals), stopped by asking it to exit."""

    def __init__(self, state: Path, configs: list[Path], token: str | None = None, **settings: Any):
        models = ServedModels.load([str(path) for path in configs])
        self.app = create_app(ServerSettings(models, state, token, **settings))
        listener = listen("127.0.0.1", 0)
        self.root = f"http://127.0.0.1:{listener.getsockname()[1]}"
        self.url = f"{self.root}/v1"
        config = uvicorn.Config(self.app, loop="asyncio", ws="none", log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [listener]}, daemon=True)
        self.thread.start()
        wait_until(lambda: self.server.started)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)


def attempt_folders(state: Path, session: str, turn: int = 1) -> Iterator[Path]:
    """The first attempt's log folder of ``turn`` of ``session``, in each run that took that turn (the
    session's record lists its runs' log folders)."""
    try:
        record = json.loads((state / "sessions" / session / "session.json").read_text())
    except (FileNotFoundError, ValueError):  # not there yet, or being written
        return
    for name in record.get("log_folders", []):
        folder = state / "massgen_logs" / name / f"turn_{turn}" / "attempt_1"
        if folder.is_dir():
            yield folder


def session_events(state: Path, session: str, turn: int = 1) -> list[dict[str, Any]]:
    """The events of ``turn`` of ``session`` logged so far."""
    return [
        json.loads(line)
        for folder in attempt_folders(state, session, turn)
        if (folder / "events.jsonl").is_file()
        for line in (folder / "events.jsonl").read_text().splitlines()
        if line.endswith("}")
    ]


def session_summary(state: Path, session: str, turn: int = 1) -> dict[str, Any] | None:
    """``summary.json`` of ``turn`` of ``session``, once it is written."""
    for folder in attempt_folders(state, session, turn):
        try:
            summary: dict[str, Any] = json.loads((folder / "summary.json").read_text())
        except (FileNotFoundError, ValueError):  # not written yet, or being written
            continue
        return summary
    return None


def sent_to(state: Path, session: str, agent: str, turn: int) -> str:
    """Every request ``agent`` was sent in ``turn`` of ``session``, as text."""
    return "".join(
        path.read_text()
        for folder in attempt_folders(state, session, turn)
        for path in sorted((folder / "requests").glob(f"{agent}_*.json"))
    )

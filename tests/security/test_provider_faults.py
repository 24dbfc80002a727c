"""Provider faults through a wire-format server on 127.0.0.1, in whole turns: retried where that helps,
else a clear failure of that agent while the turn finishes with the agents that work; summary.json says
what happened to whom; when every agent fails, one error line and exit 1."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_config
from tests.servers.fake_providers import FakeProviderServer, Reply, openai_error, openai_stream

RETRIES = 2


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def backend(url: str) -> str:
    return (
        f"{{type: chatcompletion, model: fake-model, base_url: {url}, api_key: sk-test, "
        f"max_retries: {RETRIES}, retry_base_delay_seconds: 0.01, request_timeout_seconds: 3}}"
    )


def summary() -> dict:  # type: ignore[type-arg]
    logs = Path(os.environ["MASSGEN_HOME"]) / "massgen_logs"
    return json.loads(next(logs.glob("*/turn_1/attempt_1/summary.json")).read_text())


FAULTS = {
    "500": lambda: [openai_error(500, "internal error")] * (RETRIES + 1),
    "503": lambda: [openai_error(503, "overloaded")] * (RETRIES + 1),
    "stream-cut": lambda: [Reply(frames=openai_stream("Half an ans").frames, cut_after=2)] * (RETRIES + 1),
    "never-ends": lambda: [Reply(frames=openai_stream("Still going").frames, stall_after=2)] * (RETRIES + 1),
    "bad-tool-json": lambda: [openai_stream(tool_calls=[("c1", "new_answer", '{"content": "Pa')])],
    "empty": lambda: [openai_stream("")] * 8,  # two steps of two calls at most; spare ones unused
}


EXPECTED = {
    "500": "server error (HTTP 500): internal error",
    "503": "server error (HTTP 503): overloaded",
    "stream-cut": "was cut mid-response",
    "never-ends": "did not answer within 3 s",
    "bad-tool-json": "sent arguments for tool 'new_answer' that are not valid JSON",
    "refused": "failed; check that the server is running",
    "empty": "no valid decision after re-asks",
}


@pytest.mark.parametrize("fault", [*FAULTS, "refused"])
def test_a_failing_agent_is_reported_and_the_turn_goes_on(tmp_path: Path, provider, fault: str):
    url = closed_port_url() if fault == "refused" else f"{provider.root_url}/v1"
    if fault != "refused":
        provider.script(*FAULTS[fault]())
    write_config(
        tmp_path,
        f"""
        agents:
          - id: good
            backend:
              type: scripted
              responses:
                - {{tool: new_answer, args: {{content: "Paris."}}}}
                - {{tool: vote, args: {{agent_id: agent1, reason: "correct"}}}}
          - id: flaky
            backend: {backend(url)}
        orchestrator: {{final_presentation: reuse}}
        """,
    )
    result = run_cli("--config", "config.yaml", "Capital of France?", timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "Paris.\n"
    outcome = summary()
    assert outcome["winner"] == "good"
    expected_status = "done" if fault == "empty" else "failed"  # an empty reply is no fault of the link
    assert outcome["agent_status"]["flaky"]["status"] == expected_status, outcome["agent_status"]
    assert outcome["agent_status"]["good"]["status"] == "voted"
    detail = outcome["agent_status"]["flaky"]["detail"]
    assert EXPECTED[fault] in detail, detail
    if fault in ("500", "503", "refused"):
        assert "retry 2 in" in result.stderr, "faults before any output are retried"
    else:  # a stream that sent text is not retried (it would be said twice); bad or empty replies neither
        assert "retry" not in result.stderr


def test_429_with_retry_after_is_waited_out_and_then_answered(tmp_path: Path, provider):
    provider.script(openai_error(429, "slow down", headers={"Retry-After": "0"}), openai_stream("Recovered."))
    write_config(tmp_path, f"agent:\n  id: solo\n  backend: {backend(provider.root_url + '/v1')}\n")
    result = run_cli("--config", "config.yaml", "Q?")
    assert result.returncode == 0 and result.stdout == "Recovered.\n", result.stderr[-2000:]
    assert "retry 1 in 0.0s" in result.stderr
    assert len(provider.requests) == 2


def test_every_agent_failing_is_one_error_line_and_exit_1(tmp_path: Path, provider):
    provider.script(*[openai_error(500, "down")] * 2 * (RETRIES + 1))
    url = f"{provider.root_url}/v1"
    write_config(
        tmp_path,
        f"agents:\n  - {{id: one, backend: {backend(url)}}}\n  - {{id: two, backend: {backend(url)}}}\n",
    )
    result = run_cli("--config", "config.yaml", "Q?")
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: no answer in turn 1"]
    assert "Turn 1 ended: no agent produced an answer" in result.stderr, "the reason, said once"
    assert {status["status"] for status in summary()["agent_status"].values()} == {"failed"}

"""Fallbacks are said: a summariser that fails (extractive summary used) and long-term memory that
cannot open are said once, even with --quiet, and listed in summary.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_cli, write_config
from tests.servers.fake_providers import FakeProviderServer, openai_error

LONG_ANSWER = " ".join(f"word{n}" for n in range(400))


def summaries() -> list[dict]:  # type: ignore[type-arg]
    logs = Path(os.environ["MASSGEN_HOME"]) / "massgen_logs"
    return [json.loads(path.read_text()) for path in sorted(logs.glob("*/turn_*/attempt_1/summary.json"))]


def test_a_failing_summariser_is_said_once_even_quietly(tmp_path: Path):
    server = FakeProviderServer().start()
    server.script(*[openai_error(400, "no such model")] * 20)
    try:
        write_config(
            tmp_path,
            f"""
            agent:
              id: solo
              context_window: 1200
              backend: {{type: scripted, responses: ["{LONG_ANSWER}"]}}
              memory:
                compression:
                  summarizer: {{provider: chatcompletion, model: fake, base_url: "{server.root_url}/v1"}}
            memory:
              conversation_memory: {{enabled: true}}
            """,
        )
        piped = subprocess.run(
            [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "-q"],
            input="first\nsecond\nthird\nfourth\n",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.stop()
    assert piped.returncode == 0, piped.stderr[-2000:]
    said = [line for line in piped.stderr.splitlines() if "the summariser failed" in line]
    assert len(said) == 1 and "compression uses an extractive summary" in said[0]
    assert server.requests, "the summariser was asked"
    assert any(any("the summariser failed" in w for w in s["warnings"]) for s in summaries())


def test_memory_that_cannot_open_is_said_even_quietly(tmp_path: Path):
    state = Path(os.environ["MASSGEN_HOME"])
    state.mkdir(parents=True, exist_ok=True)
    (state / "qdrant").write_text("not a folder")
    write_config(
        tmp_path,
        "agent: {backend: {type: scripted, responses: [Fine.]}}\n"
        "memory: {enabled: true, persistent_memory: {enabled: true}}\n",
    )
    result = run_cli("--config", "config.yaml", "-q", "Q?")
    assert result.returncode == 0 and result.stdout == "Fine.\n"
    assert result.stderr.count("long-term memory is off for this run") == 1
    assert "File exists" in result.stderr
    assert any("long-term memory is off" in error for error in summaries()[-1]["memory_errors"])

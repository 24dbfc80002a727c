"""SIGTERM during a turn: the agents are cancelled, a memory record queued before the signal is written,
the session is kept to continue, and the run exits 143 with one line saying what was kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import events_text, run_cli, wait_until, write_config

CONFIG = """
agents:
  - id: a
    backend:
      type: scripted
      responses: [{tool: new_answer, args: {content: "The vault code is 4711."}}, {text: "...", delay: 300}]
  - id: b
    backend:
      type: scripted
      responses: [{text: "thinking", delay: 300}]
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def test_sigterm_mid_turn_keeps_the_session_and_the_memory(tmp_path: Path):
    write_config(tmp_path, CONFIG)
    cli = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "--session", "vault", "Code?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: '"status": "answered"' in events_text())
        cli.send_signal(signal.SIGTERM)
        _, stderr = cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 143
    assert "terminated: the running turn was cancelled; session vault is kept" in stderr
    found = run_cli("memory", "search", "vault code", "--session", "vault", "--json")
    assert found.returncode == 0, found.stderr
    assert any("4711" in json.loads(line)["text"] for line in found.stdout.splitlines())
    quick = write_config(
        tmp_path, "agent: {backend: {type: scripted, responses: [Continued.]}}\n", "quick.yaml"
    )
    again = run_cli("--config", str(quick), "--session", "vault", "Still there?")
    assert again.returncode == 0 and again.stdout == "Continued.\n"
    logs = Path(os.environ["MASSGEN_HOME"]) / "massgen_logs"
    assert list(logs.glob("*/turn_2/attempt_1/summary.json")), "the session went on at turn 2"


def test_two_processes_never_share_a_session(tmp_path: Path):
    slow = write_config(
        tmp_path, "agent: {backend: {type: scripted, responses: [{text: slow, delay: 300}]}}\n", "slow.yaml"
    )
    quick = write_config(tmp_path, "agent: {backend: {type: scripted, responses: [Quick.]}}\n", "quick.yaml")
    first = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", str(slow), "--session", "shared", "Q1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: '"ContextStatus"' in events_text())  # the turn has started
        second = run_cli("--config", str(quick), "--session", "shared", "Q2")
        assert second.returncode == 2
        assert f"session shared is in use by massgen process {first.pid}" in second.stderr
        first.send_signal(signal.SIGTERM)
        assert first.wait(60) == 143
    finally:
        if first.poll() is None:
            first.kill()
    third = run_cli("--config", str(quick), "--session", "shared", "Q3")
    assert third.returncode == 0 and third.stdout == "Quick.\n"
    record = json.loads(
        (Path(os.environ["MASSGEN_HOME"]) / "sessions" / "shared" / "session.json").read_text()
    )
    turns = [(e["turn"], e["status"]) for e in record["exchanges"]]
    assert record["turns_started"] == 2 and turns == [(1, "cancelled"), (2, "answered")]

"""Every turn is accounted for, whatever became of it: an interactive session with an answered turn, a failed
one (its call got no response: it spent nothing), one cancelled by Ctrl-C while it streamed (its call
spent what it sent and what came back) and, after ``/reset``, another answered one. ``sessions show``,
``logs show``, ``logs list`` and the report give the same turns and the same figures, and ``/reset``
keeps the session's record."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.cli.in_process_cli import massgen
from tests.conftest import events_text, first_attempt_folder, wait_until, write_config

SOLO = """
agent:
  id: solo
  backend:
    type: scripted
    max_retries: 0
    responses:
      - "First answer."
      - {error: 500}
      - {text: "Partial words of a long answer", delay: 60}
      - "Fourth answer."
"""


def session_with_every_ending(tmp_path: Path) -> str:
    """Runs the session through the real command (Ctrl-C is a real SIGINT); returns its stderr."""
    config = write_config(tmp_path, SOLO)
    process = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert process.stdin is not None
    process.stdin.write(b"first question\nsecond question\nthird question\n")
    process.stdin.flush()
    wait_until(lambda: "Partial words" in events_text(turn=3))  # the third turn is streaming
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(b"/reset\nfourth question\n", timeout=60)
    assert process.returncode == 1, err.decode()  # the failed turn
    assert out.decode() == "First answer.\nFourth answer.\n"
    return err.decode()


def tokens(usage: dict) -> int:  # type: ignore[type-arg]
    return int(usage["input_tokens"]) + int(usage["output_tokens"])


def test_failed_and_cancelled_turns_count_the_same_everywhere_and_reset_keeps_them(tmp_path: Path):
    stderr = session_with_every_ending(tmp_path)
    assert "turn cancelled; the session goes on" in stderr

    listed = [json.loads(line) for line in massgen("logs", "list", "--json").stdout.splitlines()]
    assert len(listed) == 1 and listed[0]["turns"] == [1, 2, 3, 4]
    session_id, run = listed[0]["session_id"], listed[0]["run"]
    record = json.loads(massgen("sessions", "show", session_id, "--json").stdout)
    turns = record["exchanges"]
    assert [(t["turn"], t["status"], t["conversation"]) for t in turns] == [
        (1, "answered", 1),
        (2, "failed", 1),
        (3, "cancelled", 1),
        (4, "answered", 2),
    ], "/reset starts a new conversation and keeps the turns before it"
    assert [t["answer"] for t in turns] == ["First answer.", "", "", "Fourth answer."]
    spent = [tokens(t["usage"]) for t in turns]
    assert spent[1] == 0, "a call that got no response spent nothing"
    assert spent[2] > 0, "a cancelled call spent what it sent"
    total = sum(spent)

    assert tokens(listed[0]["usage"]) == total
    shown = massgen("sessions", "show", session_id).stdout
    assert "4 turn(s): 2 answered, 1 failed, 1 cancelled" in shown
    [line] = massgen("sessions", "list").stdout.splitlines()
    assert line.startswith(f"{session_id}\tturns=4\t"), "the list counts the turns show counts"
    assert f"Total: {total:,} tokens" in shown
    told = massgen("logs", "show", run).stdout
    assert f"· 4 turn(s) · {total:,} tokens" in told
    for turn, status, figure in zip(
        (1, 2, 3, 4), ("answered", "failed", "cancelled", "answered"), spent, strict=True
    ):
        assert f"Turn {turn} · attempt 1 · {status} · " in told
        assert f"s · {figure:,} tokens" in told.split(f"Turn {turn} · attempt 1")[1].splitlines()[0]
    report = tmp_path / "report.html"
    assert massgen("logs", "report", run, "--out", str(report)).exit_code == 0
    assert f"attempt(s) · {total:,} tokens" in report.read_text()


def test_a_refused_connection_spends_nothing(tmp_path: Path):
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    backend = f'{{type: openai, model: gpt-4o, api_key: sk-test, base_url: "{url}", max_retries: 0}}'
    write_config(tmp_path, f"agent: {{id: solo, backend: {backend}}}\n")
    run = massgen("--config", "config.yaml", "Anyone there?")
    assert run.exit_code == 1 and "no answer" in run.stderr
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["agent_status"]["solo"]["status"] == "failed"
    assert summary["turn_usage"]["input_tokens"] == summary["turn_usage"]["output_tokens"] == 0
    assert '"AgentUsage"' not in (first_attempt_folder() / "events.jsonl").read_text()

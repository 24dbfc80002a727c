"""An interactive session's commands, through the CLI (piped lines): /help lists them all; /cost gives
the figures `sessions show` gives; /answers, /context, /config and /inspect tell the latest turn's
answers, each agent's context use, the config in use and the turn's log."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import run_cli, state_folder, write_config

TWO_AGENTS = """
agents:
  - id: writer
    backend:
      type: scripted
      responses:
        - {tool: new_answer, args: {content: "Paris is the capital of France."}}
        - {tool: vote, args: {agent_id: agent1, reason: "it is right"}}
  - id: checker
    backend:
      type: scripted
      responses: [{tool: vote, args: {agent_id: agent1, reason: "agreed"}, delay: 0.3}]
orchestrator: {final_presentation: reuse}
"""


def chat(config: Path, *lines: str):  # type: ignore[no-untyped-def]
    result = run_cli(
        "--config", str(config), "--session", "talk", stdin="".join(f"{line}\n" for line in lines)
    )
    assert result.returncode == 0, result.stderr
    return result


def test_before_any_turn_the_commands_say_there_is_nothing_yet(tmp_path: Path):
    config = write_config(tmp_path, TWO_AGENTS)
    said = chat(config, "/help", "/answers", "/inspect", "/cost", "/context", "/nope").stderr
    for name in (
        "/help",
        "/status",
        "/cost",
        "/answers",
        "/context",
        "/config",
        "/inspect",
        "/reset",
        "/quit",
    ):
        assert re.search(rf"^  {name}\b", said, re.M), f"/help lists {name}"
    assert "no turn in this session yet" in said
    assert "this run has written no log yet" in said
    assert "no answered turn yet, nothing spent" in said
    assert "writer: no request yet · window 32,768 tokens · compresses past 24,576 (75%)" in said
    assert "unknown command /nope; /help lists the commands" in said


def test_after_a_turn_the_commands_tell_its_cost_answers_context_config_and_log(tmp_path: Path):
    config = write_config(tmp_path, TWO_AGENTS)
    result = chat(config, "What is the capital of France?", "/cost", "/answers", "/context", "/config", "/i")
    said = result.stderr
    assert result.stdout == "Paris is the capital of France.\n", "stdout holds the answer alone"

    shown = run_cli("sessions", "show", "talk")
    total = re.search(r"^Total: (.+)$", shown.stdout, re.M)
    assert total is not None and f"Total: {total.group(1)}" in said, "the figures of sessions show"
    one_line = " ".join(said.split())  # however the console wrapped it
    used = r"[\d,]+ tokens( \(estimated\))? · free"  # estimated: a step cut by a peer's answer, under load
    assert re.search(rf"turn 1 by agent: writer {used}; checker {used}", one_line)

    assert "writer (winner):\nParis is the capital of France." in said
    assert "vote writer → writer: it is right" in said and "vote checker → writer: agreed" in said
    assert "winner: writer · all agents voted" in said

    attempt = next((state_folder() / "massgen_logs").glob("*/turn_1/attempt_1"))
    events = [json.loads(line) for line in (attempt / "events.jsonl").read_text().splitlines()]
    for agent in ("writer", "checker"):
        latest = [e for e in events if e["type"] == "ContextStatus" and e["agent_id"] == agent][-1]
        about = "~" if latest["estimated"] else ""
        assert f"{agent}: {about}{latest['tokens']:,} / 32,768 tokens (" in said, "the monitor's last count"

    assert f"config: {config}" in said
    assert "writer: scripted · model scripted" in said and "checker: scripted · model scripted" in said

    assert f"turn 1: {attempt.parent}" in said
    requests = len(list((attempt / "requests").iterdir()))
    contents = f"attempt_1/: events.jsonl ({len(events)} events), requests/ ({requests} files), summary.json"
    assert contents in said
    assert f"massgen logs show {attempt.parent.parent.name}" in said

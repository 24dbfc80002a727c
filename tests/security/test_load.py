"""Load behaviour (the figures come from benchmarks/load.py): a turn of 16 agents settles with every
vote counted, and a long piped session keeps numbering its turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_config
from tests.script_module import load_script

load_benchmark = load_script("benchmarks/load.py")


def test_sixteen_agents_in_one_turn(in_process):
    run = in_process(load_benchmark.agents_yaml(16))
    result = run.app.ask("Which answer?")
    assert result.winner == "agent_0" and result.final_answer == "Answer 0."
    assert len(result.answers) == 16 and len(result.votes) == 16
    assert result.end_reason == "all agents voted"


def test_a_forty_turn_piped_session(tmp_path: Path):
    write_config(tmp_path, "agent: {backend: {type: scripted, responses: [Noted.]}}\n")
    questions = "".join(f"Question {n}?\n" for n in range(1, 41))
    piped = subprocess.run(
        [sys.executable, "-m", "massgen_cli", "--config", "config.yaml", "--session", "long", "-q"],
        input=questions,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr[-2000:]
    assert piped.stdout == "Noted.\n" * 40
    record = json.loads((Path(os.environ["MASSGEN_HOME"]) / "sessions" / "long" / "session.json").read_text())
    assert [exchange["turn"] for exchange in record["exchanges"]] == list(range(1, 41))

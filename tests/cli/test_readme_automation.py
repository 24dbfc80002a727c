"""The README's automation script, run as it is written: it starts ``massgen --automation`` (here a quick
start of two agents on a real OpenAI-compatible server on 127.0.0.1), follows ``status.json`` until the
run is complete and prints the exit code and the answer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.servers.paced import PacedServer

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_script() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    [script] = [block for block in blocks if block.startswith("# follow_run.py")]
    return script


def test_the_readme_script_follows_an_automated_run_to_its_answer(tmp_path: Path):
    script = tmp_path / "follow_run.py"
    script.write_text(readme_script())
    environment = dict(os.environ)  # `massgen` is the installed command beside this interpreter
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    with PacedServer(latency_s=0.2, tokens_per_s=500, tokens=5) as server:
        server.latency_by_model["model-two"] = 0.6  # agent1 answers first; agent2 sees it and votes
        agents = ["--backend", "chatcompletion", "--base-url", server.base_url]
        agents += ["--model", "model-one", "--model", "model-two"]
        done = subprocess.run(
            [sys.executable, str(script), *agents, "6 x 7?"],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "exit 0 (completed), winner agent1\nThe answer is 42.\n"
    progress = re.findall(r"^(\w+) after \d+s$", done.stderr, re.M)
    assert progress and set(progress) <= {"initial_answer", "enforcement", "presentation"}, done.stderr


def test_the_readme_script_reports_a_refused_run(tmp_path: Path):
    script = tmp_path / "follow_run.py"
    script.write_text(readme_script())
    environment = dict(os.environ)
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, str(script), "--model", "no-such-family-1", "Q?"],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    assert done.returncode == 1
    assert "massgen exited 1" in done.stderr
    assert "add --backend TYPE" in done.stderr

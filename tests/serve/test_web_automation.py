"""`massgen --web --automation`: the run served in the web view says what a script reads of a run as it
does without the view (the log folder and status file on stdout's first lines, then the answer; no
progress; status.json kept; MassGen's exit codes), the view's address on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.serve.serving import server_environment
from tests.serve.test_web import ANNOUNCED

THREE_AGENTS = "@examples/scripted_three_agents"
SHIPPED_ANSWER = "The capital of France is Paris, its largest city."


def automated(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "massgen_cli", *flags, "--automation", "-c", THREE_AGENTS, "Capital?"]
    environment = server_environment(folder, {})
    return subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=300)


def test_web_automation_prints_the_automation_lines_as_a_run_without_the_view(tmp_path: Path):
    plain, web = tmp_path / "plain", tmp_path / "web"
    plain.mkdir(), web.mkdir()
    without, served = automated(plain), automated(web, "--web")
    assert (without.returncode, served.returncode) == (0, 0), served.stderr
    shapes = [[line.split(": ")[0] for line in ran.stdout.splitlines()] for ran in (without, served)]
    assert shapes[0] == shapes[1] == ["LOG_DIR", "STATUS", SHIPPED_ANSWER], "the same lines"
    log_line, status_line, _ = served.stdout.splitlines()
    log_dir = Path(log_line.removeprefix("LOG_DIR: "))
    assert log_dir.is_relative_to(web / "state") and status_line == f"STATUS: {log_dir / 'status.json'}"
    status = json.loads((log_dir / "status.json").read_text())
    assert (status["finish_reason"], status["is_complete"], status["exit_code"]) == ("completed", True, 0)
    assert status["results"]["final_answer"] == SHIPPED_ANSWER
    assert ANNOUNCED.search(served.stderr), "the view's address, to open it"
    assert "answered" not in served.stderr and "Turn 1 ended" not in served.stderr, "no progress"

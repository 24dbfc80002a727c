"""A cost is shown one way everywhere: `free` when nothing was spent (never `$0.0000`), `$0.0031`, or
`unknown`; the batch progress says it as the session table and the end-of-turn line do."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.ui import cost_text
from tests.cli.in_process_cli import massgen
from tests.conftest import write_config
from tests.scripted import scripted


def test_cost_text():
    assert cost_text(0) == "free"
    assert cost_text(0.0031) == "$0.0031"
    assert cost_text(None) == "unknown"


def test_batch_progress_and_summary_say_free(tmp_path: Path):
    write_config(tmp_path, scripted({"solo": ["The answer."]}))
    (tmp_path / "questions.jsonl").write_text(
        '{"id": "q1", "question": "A?"}\n{"id": "q2", "question": "B?"}\n'
    )
    result = massgen("batch", "questions.jsonl", "--config", "config.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert sorted(line.split()[1] for line in progress) == ["q1", "q2"]
    assert all(line.endswith("· free so far") for line in progress), progress
    assert "2 answered, 0 failed · free · results in out.jsonl" in result.stderr
    assert "$0.0000" not in result.stderr
    shown = massgen("sessions", "show", "batch-q1")
    assert shown.exit_code == 0 and "free" in shown.stdout and "$0.0000" not in shown.stdout

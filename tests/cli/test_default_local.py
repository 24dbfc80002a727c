"""`massgen "question"` with no key and no config: the embedded three-agent default, for real."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.slow
def test_default_config_answers_with_the_embedded_model_and_logs_everything():
    result = run_cli("What is the capital of France?", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), "an answer on stdout"
    assert "tiny" in result.stderr, "the CLI says plainly that this is a small demo model"
    logs = sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir())
    attempt = logs[-1] / "turn_1" / "attempt_1"
    summary = json.loads((attempt / "summary.json").read_text())
    assert summary["winner"] in {"agent_a", "agent_b", "agent_c"}
    assert summary["final_answer"] == result.stdout.strip()
    assert "Paris" in summary["final_answer"], "the embedded default answers this one right"
    assert summary["end_reason"].startswith("chosen by agreement among 3 answer(s)")
    requests = sorted(path.name for path in (attempt / "requests").iterdir())
    assert requests == ["agent_a_001.json", "agent_b_001.json", "agent_c_001.json"], "one plain request each"
    first = json.loads((attempt / "requests" / "agent_a_001.json").read_text())
    assert first["response_schema"] is None and first["tools"] == []
    events = [json.loads(line)["type"] for line in (attempt / "events.jsonl").read_text().splitlines()]
    assert events[-1] == "TurnEnded" and "FinalAnswer" in events

"""`massgen "What is 2+2?"` with no config, on the embedded default for real: it answers 4, no answer
carries a few-shot label, and a tie of agreement scores is broken by likeness, not registration order."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.slow
def test_the_embedded_default_answers_two_plus_two_with_four():
    result = run_cli("What is 2+2?", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"\b(4|four)\b", result.stdout, re.I), result.stdout
    logs = sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").iterdir())
    summary = json.loads((logs[-1] / "turn_1" / "attempt_1" / "summary.json").read_text())
    assert summary["final_answer"] == result.stdout.strip()
    assert len(summary["answers"]) == 3
    leaked = [text for text in summary["answers"].values() if re.match(r"\s*(A|Q):", text)]
    assert leaked == [], "no answer starts with a label copied from the examples"
    if "a tie" in summary["end_reason"]:
        assert "broken by likeness to the other answers" in summary["end_reason"]

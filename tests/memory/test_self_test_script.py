"""The memory self-test script passes offline on the embedded defaults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test_memory_setup.py"


@pytest.mark.slow
def test_self_test_passes_offline(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--state-dir", str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:5]] == [
        "✅ TEST 1 environment",
        "✅ TEST 2 embedding",
        "✅ TEST 3 memory LLM",
        "✅ TEST 4 vector store",
        "✅ TEST 5 record and retrieve",
    ]
    assert "local embedded model" in lines[2] and "qdrant (local mode)" in lines[3]
    assert lines[-1] == "5 passed, 0 failed"


def test_self_test_fails_when_a_part_is_broken(tmp_path):
    config = tmp_path / "broken.yaml"
    config.write_text(
        "agent:\n  backend: {type: scripted, responses: [x]}\nmemory:\n  enabled: true\n"
        "  persistent_memory:\n    enabled: true\n"
        "    embedding: {provider: openai, model: text-embedding-3-small, base_url: 'http://127.0.0.1:9/v1'}\n"
        "    llm: {provider: openai, model: gpt-4.1-nano, base_url: 'http://127.0.0.1:9/v1'}\n"
    )
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--config", str(config), "--state-dir", str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1
    assert "❌ TEST 2 embedding" in result.stdout and "✅ TEST 1 environment" in result.stdout

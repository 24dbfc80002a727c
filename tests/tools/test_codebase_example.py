"""The shipped codebase example end to end through the CLI: an agent reads 58 files in a small window,
compression runs several times, and the fact of a file read early comes back through retrieval (with
long-term memory off, the same run cannot find it)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from massgen_cli.config.sources import resolve_config_path
from tests.conftest import run_cli

QUESTION = "Read the inventory service. Which port does it listen on by default?"


def last_request(state: Path) -> dict:  # type: ignore[type-arg]
    folder = next(state.glob("massgen_logs/*/turn_1/attempt_1/requests"))
    return json.loads(sorted(folder.iterdir())[-1].read_text())


def test_facts_of_early_files_come_back_after_compression(tmp_path: Path):
    result = run_cli("--config", "@examples/codebase_analysis", QUESTION, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "listens on port 8123 by default" in result.stdout
    assert result.stderr.count("📦 [analyst] Context compressed") >= 3
    assert len(list((tmp_path / "codebase_workspace" / "inventory_service").rglob("*.py"))) == 57
    messages = last_request(tmp_path / "state")["messages"]
    memory = [m for m in messages if str(m.get("content") or "").startswith("Relevant memories:")]
    assert len(memory) == 1 and "DEFAULT_PORT = 8123" in memory[0]["content"]
    others = [m for m in messages if m not in memory]
    assert not any("DEFAULT_PORT = 8123" in str(m.get("content") or "") for m in others)


def test_without_long_term_memory_the_fact_is_lost(tmp_path: Path):
    document = yaml.safe_load(resolve_config_path("@examples/codebase_analysis").read_text())
    document["memory"]["persistent_memory"]["enabled"] = False
    tool = document["agent"]["backend"]["custom_tools"][0]
    tool["path"] = str(resolve_config_path("@examples/codebase_analysis").with_name(tool["path"]))
    (tmp_path / "no_memory.yaml").write_text(yaml.safe_dump(document))
    result = run_cli("--config", "no_memory.yaml", QUESTION, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "📦 [analyst] Context compressed" in result.stderr
    assert "port (not found in what I was sent)" in result.stdout

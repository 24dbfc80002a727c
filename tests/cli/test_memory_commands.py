"""`massgen memory import|search|list|clear` through the CLI (in the test's process: pipes, signals and locks
between processes are not what these commands are tested for)."""

from __future__ import annotations

import json

from tests.cli.in_process_cli import massgen
from tests.conftest import write_config

CONFIG = """
agent:
  backend: {type: scripted, responses: [x]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


def test_import_is_idempotent_and_keeps_extra_fields(tmp_path):
    config = write_config(tmp_path, CONFIG)
    data = tmp_path / "kb.jsonl"
    data.write_text(
        '{"content": "Alice likes green tea", "speaker": "Alice", "turn": 3, "timestamp": "2024-05-01"}\n'
        "\n"
        '{"content": "Bob prefers coffee", "role": "assistant", "agent_id": "bob"}\n'
    )
    first = massgen("memory", "import", str(data), "--config", str(config), "--session", "kb")
    assert first.exit_code == 0 and "2 new memories, 0 already known" in first.stderr
    second = massgen("memory", "import", str(data), "--config", str(config), "--session", "kb")
    assert second.exit_code == 0 and "0 new memories, 2 already known" in second.stderr
    hits = [
        json.loads(line)
        for line in massgen("memory", "search", "tea", "--config", str(config), "--json").stdout.splitlines()
    ]
    tea = next(hit for hit in hits if hit["text"] == "Alice likes green tea")
    assert tea["metadata"]["speaker"] == "Alice" and tea["metadata"]["timestamp"] == "2024-05-01"
    assert (tea["metadata"]["session_id"], tea["metadata"]["turn"], tea["metadata"]["agent_id"]) == (
        "kb",
        3,
        "import",
    )
    listed = massgen(
        "memory", "list", "--config", str(config), "--agent", "bob", "--json"
    ).stdout.splitlines()
    assert [json.loads(line)["text"] for line in listed] == ["Bob prefers coffee"]


def test_bad_import_line_names_the_line(tmp_path):
    config = write_config(tmp_path, CONFIG)
    data = tmp_path / "bad.jsonl"
    data.write_text('{"content": "fine"}\n{"text": "no content field"}\n')
    result = massgen("memory", "import", str(data), "--config", str(config))
    assert (
        result.exit_code == 1
        and "bad.jsonl: line 2: needs a JSON object with a non-empty 'content'" in result.stderr
    )


def test_clear_asks_unless_yes(tmp_path):
    config = write_config(tmp_path, CONFIG)
    data = tmp_path / "kb.jsonl"
    data.write_text('{"content": "temporary note"}\n')
    assert massgen("memory", "import", str(data), "--config", str(config), "--session", "tmp").exit_code == 0
    refused = massgen("memory", "clear", "--config", str(config), "--session", "tmp")
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    cleared = massgen("memory", "clear", "--config", str(config), "--session", "tmp", "--yes")
    assert cleared.exit_code == 0 and "deleted 1 memories" in cleared.stderr
    assert massgen("memory", "list", "--config", str(config)).stdout == ""


def test_an_import_with_a_bad_turn_or_a_lone_surrogate_is_said_or_kept(tmp_path):
    config = write_config(tmp_path, CONFIG)
    for turn in ('"two"', "[1]", "-1", "1.5", "true"):
        data = tmp_path / "turns.jsonl"
        data.write_text('{"content": "fine"}\n{"content": "when", "turn": ' + turn + "}\n")
        result = massgen("memory", "import", str(data), "--config", str(config))
        said = "turns.jsonl: line 2: 'turn' must be a whole number"
        assert result.exit_code == 1 and said in result.stderr
        assert "Traceback" not in result.stderr
    data = tmp_path / "surrogate.jsonl"
    data.write_text('{"content": "half a pair \\ud800 here", "turn": "3"}\n')
    imported = massgen("memory", "import", str(data), "--config", str(config))
    assert imported.exit_code == 0, imported.stderr
    found = massgen("memory", "search", "half a pair", "--config", str(config), "--json")
    record = json.loads(found.stdout.splitlines()[0])
    assert record["text"] == "half a pair \ufffd here" and record["metadata"]["turn"] == 3

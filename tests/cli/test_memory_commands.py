"""`massgen memory import|search|list|clear` through the CLI (in the test's process: pipes, signals and locks
between processes are not what these commands are tested for)."""

from __future__ import annotations

import json

import pytest

from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from tests.cli.in_process_cli import massgen
from tests.conftest import write_config

CONFIG = """
agent:
  backend: {type: scripted, responses: [x]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


@pytest.fixture
def embedded(monkeypatch) -> list[int]:
    """How many texts each call of the offline embedder embedded, in order."""
    from massgen_cli.memory.longterm.store.embedder import LocalEmbedder

    calls: list[int] = []
    embed_many = LocalEmbedder.embed_many
    monkeypatch.setattr(
        LocalEmbedder, "embed_many", lambda self, texts: calls.append(len(texts)) or embed_many(self, texts)
    )
    return calls


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


def test_a_second_import_embeds_nothing_and_a_bad_line_imports_nothing(tmp_path, embedded):
    """Known lines are found by their key before anything is embedded (re-importing a 5,882-turn file
    embedded every turn again, 66 s); the file is checked whole before the first line is stored."""
    config = write_config(tmp_path, CONFIG)
    data = tmp_path / "talk.jsonl"
    data.write_text("".join(f'{{"content": "Line {n} of the talk", "speaker": "Ann"}}\n' for n in range(150)))
    assert massgen("memory", "import", str(data), "--config", str(config)).exit_code == 0
    assert sum(embedded) == 150
    embedded.clear()
    again = massgen("memory", "import", str(data), "--config", str(config))
    assert again.exit_code == 0 and "0 new memories, 150 already known" in again.stderr
    assert sum(embedded) == 0, "nothing embedded for lines the store holds"
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"content": "A new line before the bad one"}\nnot json\n')
    refused = massgen("memory", "import", str(broken), "--config", str(config))
    assert refused.exit_code == 1 and "broken.jsonl: line 2: not valid JSON" in refused.stderr
    listed = massgen("memory", "list", "--config", str(config))
    assert "A new line before the bad one" not in listed.stdout


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


KB_SESSION = """
agents:
  - id: a
    backend:
      type: scripted
      responses:
        - {tool: new_answer, args: {content: "The ferry leaves at noon."}}
        - {tool: vote, args: {agent_id: a, reason: "settled"}}
  - id: b
    backend:
      type: scripted
      responses:
        - {tool: vote, args: {agent_id: a, reason: "settled"}, delay: 0.3}
orchestrator: {final_presentation: reuse}
memory:
  enabled: true
  persistent_memory: {enabled: true, session_name: kb}
"""


def retrieved_blocks(run, agent_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        str(message["content"])
        for request in run.requests(agent_id)
        for message in request.messages
        if str(message.get("content", "")).startswith("Relevant memories:")
    ]


def test_an_import_without_an_agent_is_seen_by_every_agent_of_the_session_later(tmp_path, in_process):
    config = str(write_config(tmp_path, KB_SESSION, "kb.yaml"))
    data = tmp_path / "kb.jsonl"
    data.write_text('{"content": "The harbour ferry timetable changes in May."}\n')
    imported = massgen("memory", "import", str(data), "--config", config, "--session", "kb")
    assert imported.exit_code == 0, imported.stderr

    run = in_process(KB_SESSION)
    assert run.app.ask("When does the harbour ferry timetable change?").winner == "a"
    said = "[From import Turn 0] The harbour ferry timetable changes in May."
    for agent_id in ("a", "b"):
        assert any(said in block for block in retrieved_blocks(run, agent_id)), agent_id

    recall = run.app.run.provided("long-term memory").extension.lookup
    later = Viewer("b", "kb", 2)
    hits = recall.search("b", "harbour ferry timetable", 5, later)
    assert ("The harbour ferry timetable changes in May.", "import", 0) in [
        (hit.text, hit.source.agent_id, hit.source.turn) for hit in hits
    ]
    run.app.close()

    found = massgen("memory", "search", "harbour ferry", "--config", config, "--json")
    records = [json.loads(line) for line in found.stdout.splitlines()]
    meta = next(r["metadata"] for r in records if r["text"] == "The harbour ferry timetable changes in May.")
    assert (meta["agent_id"], meta["session_id"], meta["turn"]) == ("import", "kb", 0)


def test_an_import_of_a_later_turn_without_an_agent_says_how_to_make_it_seen(tmp_path):
    config = str(write_config(tmp_path, CONFIG))
    data = tmp_path / "talk.jsonl"
    data.write_text('{"content": "We met at the pier.", "turn": 2}\n{"content": "Noted.", "agent_id": "a"}\n')
    imported = massgen("memory", "import", str(data), "--config", config, "--session", "talk")
    assert imported.exit_code == 0, imported.stderr
    assert "1 record(s) of a turn after 0 are the importer's" in imported.stderr
    assert "--agent" in imported.stderr and "'turn'" in imported.stderr
    again = massgen("memory", "import", str(data), "--config", config, "--session", "talk", "--agent", "a")
    assert again.exit_code == 0 and "importer's" not in again.stderr


def test_an_import_of_long_lines_is_embedded_a_bounded_batch_at_a_time(tmp_path, monkeypatch, embedded):
    """A file of long lines streams: each batch embedded holds about ``IMPORT_BATCH_WINDOWS`` chunks,
    however long a line is, and the chunks stored are the whole lines' chunks (a 50 MB file of 50 lines
    was held and embedded whole: 910 MB)."""
    from massgen_cli.cli import memory_import
    from massgen_cli.memory.longterm.record.memories import chunk_text

    monkeypatch.setattr(memory_import, "IMPORT_BATCH_WINDOWS", 8)
    config = write_config(tmp_path, CONFIG)
    lines = [" ".join(f"w{line}x{n}" for n in range(3_000)) for line in range(3)]
    data = tmp_path / "long.jsonl"
    data.write_text("".join(json.dumps({"content": text, "speaker": "Ann"}) + "\n" for text in lines))
    chunks = [chunk for text in lines for chunk in chunk_text(text)]
    imported = massgen("memory", "import", str(data), "--config", str(config))
    assert imported.exit_code == 0 and f"imported 3 records: {len(chunks)} new memories" in imported.stderr
    assert len(embedded) >= len(chunks) // 8 and max(embedded) <= 8 + 1
    listed = massgen("memory", "list", "--config", str(config), "--json").stdout
    assert sorted(json.loads(line)["text"] for line in listed.splitlines()) == sorted(chunks)

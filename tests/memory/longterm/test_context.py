"""Context around a hit: the memories recorded just before and after it in its session come with it,
in `massgen memory search --context`, in the memories injected into an agent's step and in the
memory tools, and never one the searcher may not see."""

from __future__ import annotations

import json
from pathlib import Path

from massgen_cli.memory.longterm.record.memories import (
    ContextTurn,
    IndexedMemory,
    MemoryHit,
    RecordContext,
    Source,
)
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.retrieval import HEADER, attribution_line, hit_lines, within_budget
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.tokens import count_text_tokens
from tests.cli.in_process_cli import massgen
from tests.scripted import scripted

MEMORY = {"enabled": True, "persistent_memory": {"enabled": True, "session_name": "talk"}}
TALK = [
    ("Melanie", "The weather was lovely this afternoon, we walked by the river."),
    ("Melanie", "Did you go to the parade on Saturday?"),
    ("Caroline", "Yes, with my sister, it was loud and wonderful."),
    ("Melanie", "My phone battery keeps draining faster than it used to."),
    ("Caroline", "I started reading a long novel about a family of sailors."),
]


def import_talk(folder: Path, config: Path) -> None:
    lines = [{"content": text, "speaker": speaker, "timestamp": "8 May 2023"} for speaker, text in TALK]
    data = folder / "talk.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = massgen("memory", "import", str(data), "--config", str(config), "--session", "talk")
    assert imported.exit_code == 0, imported.stderr


def test_memory_search_shows_what_was_said_around_each_result(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(scripted({"a": ["x"]}, memory=MEMORY))
    import_talk(tmp_path, config)
    query = ("memory", "search", "Did you go to the parade?", "--config", str(config), "--limit", "1")
    alone = json.loads(massgen(*query, "--json", "--context", "0").stdout)
    assert alone["text"] == TALK[1][1] and "context" not in alone
    found = json.loads(massgen(*query, "--json").stdout)  # one on each side unless asked otherwise
    assert [(turn["offset"], turn["text"], turn["speaker"]) for turn in found["context"]] == [
        (-1, TALK[0][1], "Melanie"),
        (1, TALK[2][1], "Caroline"),
    ]
    wider = json.loads(massgen(*query, "--json", "--context", "2").stdout)
    assert [turn["offset"] for turn in wider["context"]] == [-1, 1, 2], "nothing before the first line"
    shown = massgen(*query).stdout.splitlines()
    assert shown[0].endswith(TALK[1][1]) and shown[2].startswith("       after  [import · turn 0]")


def test_an_agent_is_given_the_turns_around_its_hits_and_never_a_peers_unseen_record(tmp_path, in_process):
    config = scripted(
        {"a": [{"tool": "memory_search", "args": {"query": "parade Saturday"}}, "It was loud."]},
        memory={**MEMORY, "retrieval": {"limit": 1}},
    )
    (tmp_path / "config.yaml").write_text(config)
    import_talk(tmp_path, tmp_path / "config.yaml")
    run = in_process(config, session_id="talk")
    assert run.app.ask("Did Caroline go to the parade?").final_answer == "It was loud."
    blocks = [
        str(m["content"])
        for request in run.requests("a")
        for m in request.messages
        if str(m.get("content", "")).startswith("Relevant memories:")
    ]
    said = (
        f"[From import Turn 0] Caroline: {TALK[2][1]}\n  before: [From import Turn 0] Melanie: {TALK[1][1]}"
    )
    assert blocks and all(said in block for block in blocks), blocks
    listing = [str(m["content"]) for m in run.requests("a")[-1].messages if m.get("role") == "tool"]
    assert any(f"after [import, turn 0]: {TALK[2][1]}" in text for text in listing), listing

    store = run.app.run.provided("long-term memory").run.store
    store.record([{"role": "assistant", "content": "b's draft, not yet won"}], RecordContext("b", "talk", 2))
    for agent, sees in (("a", False), ("b", True)):
        scope = SearchFilter(viewer=Viewer(agent, "talk", 2))
        [hit] = [h for h in store.search(TALK[4][1], limit=3, scope=scope, context=3) if h.text == TALK[4][1]]
        shown = [turn.text for turn in hit.context]
        assert ("b's draft, not yet won" in shown) is sees, (agent, shown)


def hit(memory_id: str, text: str, *around: tuple[int, str, str]) -> MemoryHit:
    source = Source("a", "s", 1, 1)
    memory = IndexedMemory(memory_id, f"k:{memory_id}", text, "d", "t", "user", "", None, {}, (source,))
    turns = tuple(ContextTurn(offset, i, said, source) for offset, i, said in around)
    return MemoryHit(memory_id, text, 1.0, memory, source, turns)


def test_retrieval_shows_each_memory_once_and_drops_what_is_around_a_hit_before_the_hit():
    first = hit("1", "The gate opens at noon.", (-1, "2", "When does the gate open?"), (1, "3", "Thanks!"))
    second = hit("2", "When does the gate open?", (1, "1", "The gate opens at noon."))
    lines = hit_lines(within_budget([first, second], 1500)[0])
    assert "When does the gate open?" not in lines and "after: [From a Turn 1] Thanks!" in lines
    assert [h.id for h in within_budget([first, second], 1500)] == ["1", "2"], "a hit keeps its own line"
    tight = count_text_tokens(HEADER) + count_text_tokens(attribution_line(first)) + 2
    assert within_budget([first], tight)[0].context == (), "no room: the hit alone"

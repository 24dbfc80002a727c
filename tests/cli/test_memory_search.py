"""`massgen memory search` ranks the way retrieval does: a result keeps its place whatever the limit, a
named speaker's memories come first, dates in the question find their day and date filters act inside
the search."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import write_config
from tests.script_module import load_script

dialogues = load_script("benchmarks/long_dialogues.py")

CONFIG = """
agent:
  backend: {type: scripted, responses: [x]}
memory:
  enabled: true
  persistent_memory: {enabled: true}
"""


@pytest.fixture
def conversation(tmp_path):  # type: ignore[no-untyped-def]
    """A long dialogue (two people, seven dated sessions) imported through the CLI, and its config."""
    dialogue = dialogues.build_dialogue(7, sessions=7)
    data = tmp_path / "talk.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in dialogues.import_records(dialogue)))
    config = str(write_config(tmp_path, CONFIG))
    imported = massgen("memory", "import", str(data), "--config", config, "--session", "talk")
    assert imported.exit_code == 0, imported.stderr
    return dialogue, config


def search(config: str, query: str, *options: str) -> list[tuple[str, float]]:
    found = massgen("memory", "search", query, "--config", config, "--json", *options)
    assert found.exit_code == 0, found.stderr
    return [(record["id"], record["score"]) for record in map(json.loads, found.stdout.splitlines())]


def test_the_first_results_are_the_same_whatever_the_limit(conversation):
    dialogue, config = conversation
    memories = len(massgen("memory", "list", "--config", config, "--json").stdout.splitlines())
    assert memories > 120, "enough memories for a limit beyond one pool"
    for question in dialogue.questions[:6]:
        ten = search(config, question.text, "--limit", "10")
        fifty = search(config, question.text, "--limit", "50")
        beyond = search(config, question.text, "--limit", "120")
        assert len(ten) == 10 and len(fifty) == 50 and len(beyond) == 120
        assert fifty[:10] == ten and beyond[:50] == fifty, question.text
        assert len({memory_id for memory_id, _ in beyond}) == 120


PETS = """
agents:
  - id: walrus
    backend:
      type: scripted
      responses:
        - {{tool: new_answer, args: {{content: "{walrus}"}}}}
        - {{tool: vote, args: {{agent_id: walrus, reason: "both told"}}}}
  - id: marten
    backend:
      type: scripted
      responses:
        - {{tool: new_answer, args: {{content: "{marten}"}}}}
        - {{tool: vote, args: {{agent_id: walrus, reason: "both told"}}}}
orchestrator: {{final_presentation: reuse, peer_updates: none}}
memory:
  enabled: true
  persistent_memory: {{enabled: true}}
"""
PUPPY = ("We brought home a puppy called Biscuit.", "walrus")


def hits(config: str, query: str, *options: str) -> list[tuple[str, str]]:
    found = massgen("memory", "search", query, "--config", config, "--json", *options)
    assert found.exit_code == 0, found.stderr
    return [(hit["text"], hit["metadata"]["agent_id"]) for hit in map(json.loads, found.stdout.splitlines())]


def test_a_question_that_names_an_agent_finds_that_agents_memory_first(tmp_path):
    """In session ``named`` the answers name their agents; in ``unnamed`` only who recorded them does,
    and similarity alone prefers the other agent's look-alike."""
    for session, walrus, marten in (
        ("named", "Walrus adopted a puppy named Biscuit", "Marten adopted a rabbit"),
        ("unnamed", PUPPY[0], "I adopted a rabbit."),
    ):
        config = str(write_config(tmp_path, PETS.format(walrus=walrus, marten=marten), f"{session}.yaml"))
        answered = massgen("-c", config, "-q", "--session", session, "Which pets did you adopt?")
        assert answered.exit_code == 0, answered.stderr
    named = ("--session", "named")
    assert hits(config, "What did Walrus adopt?", *named)[0] == (
        "Walrus adopted a puppy named Biscuit",
        "walrus",
    )
    assert hits(config, "What did Marten adopt?", *named)[0] == ("Marten adopted a rabbit", "marten")
    unnamed = ("--session", "unnamed")
    dense = hits(config, "What did Walrus adopt?", *unnamed, "--method", "dense")
    assert dense.index(("I adopted a rabbit.", "marten")) < dense.index(PUPPY), "similarity alone"
    assert hits(config, "What did Walrus adopt?", *unnamed)[0] == PUPPY
    assert hits(config, "What did Marten adopt?", *unnamed)[0] == ("I adopted a rabbit.", "marten")


def test_a_relative_date_is_found_by_the_day_it_names_and_shown_as_said(tmp_path):
    said = "I went to a pottery class last month."
    lines = [
        {"content": said, "speaker": "Caroline", "timestamp": "1:56 pm on 8 June, 2023"},
        {"content": said, "speaker": "Melanie", "timestamp": "3 August 2023"},
        *({"content": f"I went to a meeting about item {n}.", "speaker": "Melanie"} for n in range(20)),
    ]
    data = tmp_path / "talk.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = str(write_config(tmp_path, CONFIG))
    assert massgen("memory", "import", str(data), "--config", config, "--session", "talk").exit_code == 0
    for query, speaker in (
        ("Who went to a pottery class in May 2023?", "Caroline"),
        ("Who went to a pottery class in July 2023?", "Melanie"),
    ):
        found = massgen("memory", "search", query, "--config", config, "--json", "--limit", "1")
        top = json.loads(found.stdout)
        assert (top["text"], top["metadata"]["speaker"]) == (said, speaker), query


def test_dates_filter_inside_the_search_and_date_words_in_the_question_find_their_day(tmp_path):
    yesterday = datetime.now(UTC).date() - timedelta(days=1)  # memories are dated in UTC
    trips = {
        "We took the boat to Lisbon.": yesterday.isoformat(),
        "We took the boat to Porto.": "8 May 2023",
        "We took the boat to Faro.": "1:56 pm on 3 June, 2023",
    }
    lines = [{"content": text, "speaker": "Ann", "timestamp": day} for text, day in trips.items()]
    lines += [{"content": f"I went to a meeting about item {n}.", "speaker": "Bo"} for n in range(20)]
    data = tmp_path / "trips.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = str(write_config(tmp_path, CONFIG))
    assert massgen("memory", "import", str(data), "--config", config).exit_code == 0

    def boats(*options: str, query: str = "boat trip") -> list[str]:
        return [text for text, _ in hits(config, query, "--limit", "30", *options) if "boat" in text]

    assert sorted(boats()) == sorted(trips), "every trip is found without a filter"
    assert boats("--since", "May 2023", "--until", "2023-05-31") == ["We took the boat to Porto."]
    assert boats("--since", "2023-05-09", "--until", "2023") == ["We took the boat to Faro."]
    assert boats("--since", "yesterday") == ["We took the boat to Lisbon."]
    meetings = [text for text, _ in hits(config, "meeting", "--limit", "30", "--since", "today")]
    assert len(meetings) == 20 and all("meeting" in text for text in meetings), "undated: the day imported"
    older = {text for text, _ in hits(config, "meeting", "--limit", "30", "--until", "last year")}
    assert older == {"We took the boat to Porto.", "We took the boat to Faro."}
    for method in ("lexical", "hybrid"):
        found = boats("--method", method, query="Where did we take the boat yesterday?")
        assert found[0] == "We took the boat to Lisbon.", method
    refused = massgen("memory", "search", "boat", "--config", config, "--since", "someday")
    assert refused.exit_code == 2 and "--since 'someday' names no date" in refused.stderr

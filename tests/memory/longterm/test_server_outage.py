"""A session's turns have one numbering, the server's, through an outage: machine A reaches the real
PostgreSQL through a proxy the test cuts, machine B reaches it directly. A's turn taken while the server
is unreachable is kept in A's folder, marked offline, and appended with the next free number when A
reaches the server again; its memories follow it. Before, A's offline turn 2 and B's turn 2 were two
turn 2s, A's vanished on its next run, and its memories were filed under B's turn."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import write_config
from tests.memory.longterm.test_server_truth import CONFIG
from tests.servers.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow

ANSWERING = "".join(line for line in CONFIG.splitlines(keepends=True) if "tool: vote" not in line)
"""The Falcon run on the server, its one agent answering every turn of a run (its one entry repeats)."""

QUESTIONS = {
    "A online": "Which gate does the heron use?",
    "A offline": "Which bridge does the otter cross?",
    "B meanwhile": "Which tower does the falcon circle?",
    "A again": "Which mill does the beaver guard?",
}


@pytest.fixture
def proxy(pgvector_url: str) -> Iterator[TcpProxy]:
    port = int(pgvector_url.rsplit(":", 1)[1].split("/")[0])
    through = TcpProxy(port)
    yield through
    through.close()


def configs(folder: Path, url: str, proxy: TcpProxy) -> tuple[str, str]:
    """Machine A's config (the server through the proxy) and machine B's (the server directly)."""
    collection = f"outage_{uuid.uuid4().hex[:10]}"
    a = write_config(folder, ANSWERING.format(url=proxy.url_for(url), collection=collection), "a.yaml")
    b = write_config(folder, ANSWERING.format(url=url, collection=collection), "b.yaml")
    return str(a), str(b)


def ask(config: str, state: Path, *questions: str) -> str:
    """Questions as turns of session kbA (one run); what the run said on stderr."""
    args = ("-c", config, "--state-dir", str(state), "--session", "kbA")
    if len(questions) == 1:
        done = massgen(*args, questions[0])
    else:
        done = massgen(*args, stdin="".join(f"{question}\n" for question in questions))
    assert done.exit_code == 0 and "7781" in done.stdout, done.stderr
    return done.stderr


def shown(config: str, state: Path) -> dict:
    done = massgen("sessions", "show", "kbA", "--json", "-c", config, "--state-dir", str(state))
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def memory_turns(config: str, state: Path) -> dict[str, set[int]]:
    """The turns each question is filed under in the server's memories of session kbA."""
    done = massgen("memory", "list", "--session", "kbA", "-c", config, "--state-dir", str(state), "--json")
    assert done.exit_code == 0, done.stderr
    turns: dict[str, set[int]] = {}
    for line in done.stdout.splitlines():
        memory = json.loads(line)
        turns[memory["text"]] = {source["turn"] for source in memory["sources"]}
    return turns


def test_an_offline_turn_is_appended_with_the_next_free_number_and_its_memories(
    tmp_path, pgvector_url, proxy
):
    a_config, b_config = configs(tmp_path, pgvector_url, proxy)
    machine_a, machine_b = tmp_path / "machine-a", tmp_path / "machine-b"
    ask(a_config, machine_a, QUESTIONS["A online"])

    proxy.cut()
    said = ask(a_config, machine_a, QUESTIONS["A offline"])
    assert said.count("cannot be reached") == 1, said
    assert "filed there with the next free number" in said, said
    offline = json.loads((machine_a / "sessions" / "kbA" / "session.json").read_text())
    assert [e["offline"] for e in offline["exchanges"]] == [False, True], "kept here, marked offline"
    table = massgen("sessions", "show", "kbA", "--state-dir", str(machine_a))
    assert "answered (offline)" in table.stdout and "wait to be filed there" in table.stdout, table.stdout

    ask(b_config, machine_b, QUESTIONS["B meanwhile"])
    proxy.restore()
    said = ask(a_config, machine_a, QUESTIONS["A again"])
    assert "filed on the memory server as turn 3" in said, said

    expected = [QUESTIONS[k] for k in ("A online", "B meanwhile", "A offline", "A again")]
    for config, machine in ((a_config, machine_a), (b_config, machine_b)):
        record = shown(config, machine)
        assert [e["question"] for e in record["exchanges"]] == expected, machine
        assert [e["turn"] for e in record["exchanges"]] == [1, 2, 3, 4], machine
        assert [e["offline"] for e in record["exchanges"]] == [False, False, True, False]
        turns = memory_turns(config, machine)
        assert {question: turns.get(question) for question in expected} == {
            question: {number} for number, question in enumerate(expected, start=1)
        }, "each turn's memories are filed under its one number"


def test_the_outage_is_said_once_in_a_run_of_several_turns(tmp_path, pgvector_url, proxy):
    a_config, _ = configs(tmp_path, pgvector_url, proxy)
    machine_a = tmp_path / "machine-a"
    proxy.cut()
    said = ask(a_config, machine_a, QUESTIONS["A online"], QUESTIONS["A offline"], QUESTIONS["A again"])
    assert said.count("cannot be reached") == 1, said
    assert said.count("could not use the PostgreSQL memory store") == 1, said
    proxy.restore()
    said = ask(a_config, machine_a, "And the code again?")
    assert "filed on the memory server as turns 1-3" in said, said
    record = shown(a_config, tmp_path / "machine-c")
    assert [e["turn"] for e in record["exchanges"]] == [1, 2, 3, 4]


def test_an_outage_in_the_middle_of_a_run_is_said_once_and_its_turns_filed_after(
    tmp_path, pgvector_url, proxy, in_process
):
    a_config, b_config = configs(tmp_path, pgvector_url, proxy)
    machine_a, machine_b = Path(os.environ["MASSGEN_HOME"]), tmp_path / "machine-b"
    run = in_process(Path(a_config).read_text(), session_id="kbA", interactive=True)
    run.app.ask(QUESTIONS["A online"])
    proxy.cut()
    run.app.ask(QUESTIONS["A offline"])
    run.app.ask("Which weir does the kingfisher watch?")
    run.app.close()
    said = run.err.getvalue()
    assert said.count("cannot be reached") == 2, said  # the session's line and the memory's, once each
    assert said.count("memory retrieval for agent_a failed") == 1, said
    assert "marked offline and filed there with the next free number" in said, said

    ask(b_config, machine_b, QUESTIONS["B meanwhile"])
    proxy.restore()
    said = ask(a_config, machine_a, QUESTIONS["A again"])
    assert "(turns 2-3 here) are filed on the memory server as turns 3-4" in said, said
    record = shown(b_config, machine_b)
    questions = [e["question"] for e in record["exchanges"]]
    assert questions == [
        QUESTIONS["A online"],
        QUESTIONS["B meanwhile"],
        QUESTIONS["A offline"],
        "Which weir does the kingfisher watch?",
        QUESTIONS["A again"],
    ]
    assert [e["turn"] for e in record["exchanges"]] == [1, 2, 3, 4, 5]
    turns = memory_turns(b_config, machine_b)
    assert [turns[question] for question in questions] == [{1}, {2}, {3}, {4}, {5}]
    threads = json.loads((machine_a / "sessions" / "kbA" / "threads.json").read_text())
    asked = [item["message"]["content"] for item in threads["agent_a"] if item["message"]["role"] == "user"]
    assert asked == questions, "the conversation holds every turn once, in the one numbering"

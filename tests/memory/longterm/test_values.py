"""Learned memory values: TD(λ) from coordination outcomes."""

from __future__ import annotations

import json

import pytest

from massgen_cli.config.memory import ValueLearningConfig
from massgen_cli.memory.longterm.retrieve.values import EligibilityTraces, td_update
from tests.cli.in_process_cli import massgen
from tests.conftest import run_cli, write_config

WINNER_TEXT = "The bridge code is 1234, from the harbour log."
LOSER_TEXT = "The bridge code is 9999, as a rumour says."


def test_td_update_moves_toward_the_reward_and_stays_in_range():
    assert td_update(0.5, 1.0, 1.0, 0.1) == pytest.approx(0.55)
    assert td_update(0.5, 0.0, 1.0, 0.1) == pytest.approx(0.45)
    assert td_update(0.9, 1.0, 50.0, 0.5) == 1.0
    assert td_update(0.1, 0.0, 50.0, 0.5) == 0.0
    small, large = td_update(0.5, 1.0, 1.0, 0.1), td_update(0.5, 1.0, 1.0, 0.3)
    assert 0.5 < small < large


def test_traces_decay_with_lambda_and_the_reward_function_is_explicit():
    traces = EligibilityTraces(ValueLearningConfig(enabled=True, **{"lambda": 0.5}))
    traces.observe("winner", ["shared", "old"])
    traces.observe("winner", ["shared"])
    traces.observe("loser", ["shared", "only_loser"])
    traces.observe("voter", ["only_voter"])
    assert traces.traces["winner"] == {"shared": 1.5, "old": 0.5}
    updates = {u.memory_id: (u.reward, u.trace) for u in traces.outcome("winner", ["loser"])}
    assert updates == {"shared": (1.0, 1.5), "old": (1.0, 0.5), "only_loser": (0.0, 1.0)}


def run_demo(alpha: float, turns: int = 3) -> dict[str, list[float]]:
    """Run the shipped demo turn by turn, each turn a process of its own; the values of the winner's and
    the loser's answer after each (read in the test's process)."""
    history: dict[str, list[float]] = {WINNER_TEXT: [], LOSER_TEXT: []}
    questions = ["What is the bridge code?", "And the bridge code again?", "Once more: the bridge code?"]
    for turn in range(turns):
        result = run_cli(
            "--config",
            "@examples/scripted_values",
            "--session",
            f"alpha{alpha}",
            "-q",
            questions[turn],
            process=True,
        )
        assert result.returncode == 0, result.stderr
        listing = massgen("memory", "list", "--config", "@examples/scripted_values", "--json")
        values = {r["text"]: r["value"] for r in map(json.loads, listing.stdout.splitlines())}
        for text in history:
            history[text].append(values.get(text, 0.5))
    return history


def test_values_rise_for_winners_fall_for_losers_and_survive_new_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("MASSGEN_HOME", str(tmp_path / "low"))
    low = run_demo(alpha=0.3)
    winner, loser = low[WINNER_TEXT], low[LOSER_TEXT]
    # In turn 1 an agent sees only its own records: a restart that looks memory up after its answer was
    # recorded (timing) finds that answer, so the winner's may rise and the loser's fall, never the other way.
    assert winner[0] >= 0.5 >= loser[0], (winner, loser)
    assert winner[0] < winner[1] <= winner[2] and loser[0] > loser[1] >= loser[2]
    # Each restart of an agent looks memory up again and grows its traces, and restarts depend on timing
    # (a busy machine makes more): a value may reach its bound early, but it never turns back.
    assert winner[2] > winner[1] or winner[2] == 1.0, winner
    assert loser[2] < loser[1] or loser[2] == 0.0, loser
    ranked = massgen(
        "memory", "values", "--config", "@examples/scripted_values", "--goal", "bridge", "--json"
    )
    texts = [json.loads(line)["text"] for line in ranked.stdout.splitlines()]
    assert texts.index(WINNER_TEXT) < texts.index(LOSER_TEXT) and texts[-1] == LOSER_TEXT


def test_a_larger_alpha_moves_values_further(tmp_path, monkeypatch):
    config = (
        __import__("pathlib").Path(__file__).resolve().parents[3]
        / "configs"
        / "memory"
        / "scripted_values.yaml"
    ).read_text()
    fast = tmp_path / "fast.yaml"
    fast.write_text(config.replace("alpha: 0.3", "alpha: 0.9").replace("bridge_demo", "fast_demo"))
    slow = tmp_path / "slow.yaml"
    slow.write_text(config.replace("alpha: 0.3", "alpha: 0.05").replace("bridge_demo", "slow_demo"))
    moved = {}
    for name, path in (("fast", fast), ("slow", slow)):
        monkeypatch.setenv("MASSGEN_HOME", str(tmp_path / name))
        for question in ("What is the bridge code?", "And the bridge code again?"):
            assert massgen("--config", str(path), "-q", question).exit_code == 0
        listing = massgen("memory", "list", "--config", str(path), "--json")
        values = {r["text"]: r["value"] for r in map(json.loads, listing.stdout.splitlines())}
        moved[name] = (values[WINNER_TEXT] - 0.5, 0.5 - values[LOSER_TEXT])
    assert moved["fast"][0] > moved["slow"][0] > 0
    assert moved["fast"][1] > moved["slow"][1] > 0


def values_team(a: str, b: str) -> str:
    """Two scripted agents with value learning: each says ``a`` or ``b`` first (a response a line),
    then votes for a's answer (agent1) as often as asked; peer updates deferred, so no step is cut short."""
    votes = "".join('        - {tool: vote, args: {agent_id: agent1, reason: "x"}}\n' for _ in range(6))

    def agent(name: str, first: str) -> str:
        backend = "    backend:\n      type: scripted\n      responses:\n"
        return f"  - id: {name}\n{backend}        - {first}\n{votes}"

    return (
        f"agents:\n{agent('a', a)}{agent('b', b)}"
        "orchestrator: {final_presentation: reuse, peer_updates: defer}\n"
        "memory:\n  enabled: true\n  persistent_memory: {enabled: true}\n"
        "  value_learning: {enabled: true, alpha: 0.5}\n"
    )


ANSWERING = values_team(
    f'{{tool: new_answer, args: {{content: "{WINNER_TEXT}"}}}}',
    f'{{tool: new_answer, args: {{content: "{LOSER_TEXT}"}}}}',
)
THINKING = values_team('{text: "thinking for a long time", delay: 300}', '{text: "thinking too", delay: 300}')


def test_a_cancelled_turn_changes_no_value_and_a_finished_one_does(in_process):
    """Each turn's agents are scripted for that turn (each continues the session), so what they say does
    not depend on how fast an earlier turn went."""
    import asyncio

    from tests.conftest import wait_until

    first = in_process(ANSWERING, interactive=True)
    answered = first.app.ask("What is the bridge code?")
    assert answered.winner == "a"
    store = first.app.run.provided("long-term memory").run.store
    ids = [m.id for m in store.list_memories()]
    before = store.index.values(ids, "general")
    first.app.close()

    slow = in_process(THINKING, session_id=answered.session_id, interactive=True)
    memory = slow.app.run.provided("long-term memory").run

    async def cancelled_turn() -> None:
        turn = asyncio.create_task(slow.app.run.turns.run("And the bridge code again?"))
        # Cancelled once both agents are in their slow step: retrieval has traced memories by then.
        await asyncio.to_thread(wait_until, lambda: len(slow.requests("a")) == len(slow.requests("b")) == 1)
        assert memory.traces.traces, "turn 2 traced the memories it retrieved"
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn

    slow.app.runner.run(cancelled_turn())
    assert memory.store.index.values(ids, "general") == before
    assert memory.traces.traces == {}
    slow.app.close()

    last = in_process(ANSWERING, session_id=answered.session_id, interactive=True)
    assert last.app.ask("Once more: the bridge code?").winner == "a"
    store = last.app.run.provided("long-term memory").run.store
    assert store.index.values(ids, "general") != before, "a finished turn does move the values"


SHOWN_AROUND = """
agent:
  id: a
  backend:
    type: scripted
    responses:
      - {tool: new_answer, args: {content: "Yes: Ben went to the Pride parade with his sister in June."}}
      - {tool: vote, args: {agent_id: agent1, reason: "x"}}
memory:
  enabled: true
  persistent_memory: {enabled: true}
  retrieval: {limit: 1, context_turns: 1}
  value_learning: {enabled: true, alpha: 0.5}
"""


def values_after_a_won_turn(tmp_path, in_process, config_text: str, said: list[dict[str, str]]):  # type: ignore[no-untyped-def]
    """Import ``said`` as session ``talk``, let the config's one agent win a turn about the parade in
    that session, and give each line's learned value."""
    config = str(write_config(tmp_path, config_text))
    data = tmp_path / "talk.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in said))
    imported = massgen("memory", "import", str(data), "--config", config, "--session", "talk")
    assert imported.exit_code == 0, imported.stderr
    run = in_process(config_text, session_id="talk")
    assert run.app.ask("Did Ben go to the Pride parade?").winner == "a"
    listing = massgen("memory", "list", "--config", config, "--session", "talk", "--json")
    values = {row["text"]: row["value"] for row in map(json.loads, listing.stdout.splitlines())}
    return [values[line["content"]] for line in said]


def test_the_memories_shown_around_a_hit_learn_with_it(tmp_path, in_process):
    said = [  # the question names Ben: his answer is the hit, the question beside it is shown too
        {"content": "The harbour ferry timetable changes every winter.", "speaker": "Ana"},
        {"content": "Did you go to the Pride parade, Ben?", "speaker": "Ana"},
        {"content": "Yes, I went with my sister in June.", "speaker": "Ben"},
    ]
    unrelated, around, hit = values_after_a_won_turn(tmp_path, in_process, SHOWN_AROUND, said)
    assert hit > 0.5, "the hit was in the winner's context"
    assert around > 0.5, "so was the question shown beside it"
    assert unrelated == 0.5, "this one was never shown"


FOUND_BY_THE_TOOL = """
agent:
  id: a
  backend:
    type: scripted
    responses:
      - {tool: memory_search, args: {query: "Pride parade", since: "June 2023"}}
      - {tool: new_answer, args: {content: "Yes: Ben went to the Pride parade with his sister in June."}}
      - {tool: vote, args: {agent_id: agent1, reason: "x"}}
memory:
  enabled: true
  persistent_memory: {enabled: true}
  retrieval: {limit: 0, context_turns: 0}
  value_learning: {enabled: true, alpha: 0.5}
"""


def test_what_the_memory_tool_finds_learns_with_the_turn(tmp_path, in_process):
    said = [  # the tool keeps to June 2023 on: it finds the first line alone
        {"content": "Ben went to the Pride parade.", "speaker": "Ana", "timestamp": "2023-06-10"},
        {"content": "The harbour ferry changes its timetable.", "speaker": "Ana", "timestamp": "2023-01-05"},
    ]
    found, unrelated = values_after_a_won_turn(tmp_path, in_process, FOUND_BY_THE_TOOL, said)
    assert found > 0.5, "retrieval was off: the tool found it, in the winner's step"
    assert unrelated == 0.5, "never found, never shown"

"""massgen-cli from Python: run, arun, stream and Team on scripted configs, printing nothing; the
README's example runs as written."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import massgen_cli
from massgen_cli.errors import ConfigError
from massgen_cli.events import FinalAnswer, RunEvent, TurnEnded

THREE = "@examples/scripted_three_agents"
README = Path(__file__).resolve().parents[1] / "README.md"


def test_run_answers_and_a_session_continues_with_arun(tmp_path, capfd):
    first = massgen_cli.run(THREE, "What is the capital of France?", state_dir=tmp_path)
    assert first.answer and "Paris" in first.answer and first.winner in first.answers
    assert first.votes and all(vote.target == first.winner for vote in first.votes)
    assert first.turn == 1 and first.tokens > 0 and first.cost_usd == 0.0
    assert (
        first.log_folder is not None
        and (first.log_folder / "turn_1" / "attempt_1" / "summary.json").is_file()
    )
    second = asyncio.run(massgen_cli.arun(THREE, "And again?", session=first.session_id, state_dir=tmp_path))
    assert (second.session_id, second.turn) == (first.session_id, 2)
    said = capfd.readouterr()
    assert said.out == "" and said.err == "", "nothing printed unless asked"


def test_stream_yields_the_typed_events_as_they_happen_with_turn_ended_last(tmp_path):
    async def events() -> list[RunEvent]:
        return [event async for event in massgen_cli.stream(THREE, "Capital of France?", state_dir=tmp_path)]

    heard = asyncio.run(events())
    assert isinstance(heard[-1], TurnEnded)
    [final] = [event for event in heard if isinstance(event, FinalAnswer)]
    assert "Paris" in final.text


def test_a_team_answers_several_turns_of_one_session_and_a_document_is_a_config(tmp_path):
    document = {"agent": {"backend": {"type": "scripted", "responses": ["4", "5"]}}}
    heard: list[RunEvent] = []
    with massgen_cli.Team(document, session="sums", state_dir=tmp_path, on_event=heard.append) as team:
        assert team.ask("2 + 2?").answer == "4"
        assert team.ask("2 + 3?").answer == "5"
        assert team.session_id == "sums"
    assert sum(isinstance(event, TurnEnded) for event in heard) == 2


def test_a_bad_config_is_a_config_error_naming_its_path(tmp_path):
    with pytest.raises(ConfigError, match=r"agent\.backend\.temprature"):
        massgen_cli.run(
            {"agent": {"backend": {"type": "scripted", "temprature": 1}}}, "Q?", state_dir=tmp_path
        )


def test_the_readme_example_runs_as_written(capsys):
    [example] = re.findall(r"## From Python\n.*?```python\n(.*?)```", README.read_text(), re.S)
    exec(compile(example, "README.md", "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.splitlines()
    assert (
        "Paris" in printed[0] and printed[1:3] == ["AgentStatus"] * 2 and printed[-2:] == ["TurnEnded", "4"]
    )

"""``type: gemini`` through the command line against a local server that speaks Gemini's own API and
refuses what it refuses (GEMINI_BASE_URL moved there): two agents coordinate over two turns with
function calls (new_answer, vote), the next turn gives Gemini its calls back signed with their results,
usage is counted and priced, and ``--validate`` names the variables a missing key is read from."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, write_config
from tests.servers.fake_gemini import FakeGeminiServer, field
from tests.servers.playing_model import FINAL_TEXT, PlayingModel

TWO_AGENTS = """
agents:
  - id: planner
    backend: {type: gemini, model: gemini-3-flash-preview}
  - id: critic
    backend: {model: gemini-3-pro-preview}
"""


@pytest.fixture
def playing_gemini(monkeypatch) -> Iterator[FakeGeminiServer]:
    server = FakeGeminiServer(PlayingModel()).start()
    monkeypatch.setenv("GEMINI_BASE_URL", server.root_url)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-key-0000")
    yield server
    server.stop()


def test_two_gemini_agents_answer_and_vote_with_function_calls(tmp_path, playing_gemini):
    """The second agent's backend type comes from its model's name, as MassGen infers it."""
    config = write_config(tmp_path, TWO_AGENTS)
    result = massgen("--config", str(config), stdin="What should we build next?\nAnd after that?\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{FINAL_TEXT}\n" * 2
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["answers"] and summary["votes"] and summary["winner"] in summary["answers"]
    # Which agents' votes stand at the end depends on timing (a vote cast before a peer's newer answer is
    # superseded); that they are the two Gemini agents' function calls is the point here.
    assert {vote["voter"] for vote in summary["votes"]} <= {"planner", "critic"}
    for usage in summary["usage"].values():  # a step a peer's answer cut is estimated, the others Gemini's
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["cost_usd"] > 0
    given_back = [  # turn 2 carries each agent's thread: turn 1's decision, as Gemini made and signed it
        part
        for request in playing_gemini.requests
        for content in request.body["contents"]
        for part in content["parts"]
        if field(part, "functionCall") or field(part, "functionResponse")
    ]
    calls = [part for part in given_back if field(part, "functionCall")]
    # An agent's thread ends with its last decision of turn 1: a vote, or under load a new answer given
    # after a peer's (which decision comes last is timing).
    assert calls and {field(part, "functionCall")["name"] for part in calls} <= {"vote", "new_answer"}
    assert all(field(part, "thoughtSignature") for part in calls)
    answered = {
        field(part, "functionResponse")["id"] for part in given_back if field(part, "functionResponse")
    }
    assert answered == {field(part, "functionCall")["id"] for part in calls}
    models = {request.path.split("/models/")[1].split(":")[0] for request in playing_gemini.requests}
    assert models == {"gemini-3-flash-preview", "gemini-3-pro-preview"}


def test_a_gemini_model_named_on_the_command_line_calls_geminis_own_api(playing_gemini):
    result = massgen("--model", "gemini-2.5-flash", "What should we build next?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{FINAL_TEXT}\n"
    assert [r.path for r in playing_gemini.requests] == [
        "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    ]


def test_validate_names_the_variables_a_gemini_key_is_read_from(tmp_path):
    config = write_config(tmp_path, TWO_AGENTS)
    result = massgen("--validate", str(config))
    assert result.exit_code == 2
    said = result.stdout + result.stderr
    for agent in (0, 1):
        assert (
            f"agents[{agent}].backend: no API key for backend 'gemini': set GEMINI_API_KEY or GOOGLE_API_KEY"
            in said
        )

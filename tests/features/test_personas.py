"""Personas (``coordination.persona_generator``): one request to the first agent's model writes each
agent's persona, which its system prompt carries until its first answer; a reply that does not give
every agent one falls back to a fixed set, said once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import massgen_cli
from massgen_cli.events import Notice, RunEvent
from massgen_cli.features.personas import FIXED
from tests.scripted import answer, scripted, vote

WRITTEN = {"a": "You favour speed above all.", "b": "You favour rigour above all."}


def team(first_reply: dict[str, Any], **generator: Any) -> dict[str, Any]:
    text = scripted(
        {"a": [first_reply, answer("A's answer")], "b": [answer("B's answer"), vote("a", "a is right")]},
        orchestrator={"coordination": {"persona_generator": {"enabled": True, **generator}}},
    )
    return yaml.safe_load(text)  # type: ignore[no-any-return]


def system_prompts(log_folder: Path, agent_id: str) -> list[str]:
    """The system message of each request ``agent_id`` sent, in order."""
    found = sorted(log_folder.glob(f"turn_*/attempt_*/requests/{agent_id}_*.json"))
    requests = [json.loads(path.read_text()) for path in found]
    return [
        request["messages"][0]["content"]
        for request in requests
        if request["messages"][0]["role"] == "system"
    ]


def test_each_agent_gets_the_persona_the_model_wrote_until_its_first_answer(tmp_path):
    events: list[RunEvent] = []
    result = massgen_cli.run(
        team({"text": json.dumps(WRITTEN)}), "Which sort?", state_dir=tmp_path, on_event=events.append
    )
    assert result.answer
    said = [event.message for event in events if isinstance(event, Notice)]
    assert "[a] persona: You favour speed above all." in said
    assert "[b] persona: You favour rigour above all." in said
    assert result.log_folder is not None
    prompts = system_prompts(result.log_folder, "b")
    assert "Your persona for this question: You favour rigour above all." in prompts[0]
    assert all("persona" not in prompt for prompt in prompts[1:]), "dropped after its first answer"


def test_a_reply_without_every_persona_falls_back_to_the_fixed_set(tmp_path):
    events: list[RunEvent] = []
    config = team(
        {"text": json.dumps({"a": "only one"})}, diversity_mode="methodology", after_first_answer="keep"
    )
    result = massgen_cli.run(config, "Which sort?", state_dir=tmp_path, on_event=events.append)
    said = [event.message for event in events if isinstance(event, Notice)]
    assert any("a fixed set is used" in message for message in said)
    assert f"[b] persona: {FIXED['methodology'][1]}" in said
    assert result.log_folder is not None
    prompts = system_prompts(result.log_folder, "b")
    assert all(FIXED["methodology"][1] in prompt for prompt in prompts), "kept after its first answer"

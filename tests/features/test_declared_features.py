"""A feature declares itself and is added by one registration: its tool is offered to the agents, its
settings come from the config's ``features`` block (checked by its own model), and its request hook sees
every request the agents send."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import yaml

import massgen_cli
from massgen_cli.errors import ConfigError
from massgen_cli.events import AgentUsage, RunEvent, ToolFinished
from massgen_cli.features import registry
from massgen_cli.features.declaration import Feature, Opened
from tests.features import greeting_feature
from tests.scripted import answer, scripted, vote


@pytest.fixture
def greeting() -> Iterator[None]:
    registry.register(greeting_feature.FEATURE)
    greeting_feature.OPENED.clear()
    yield
    registry.unregister("greeting")


def config(**features: object) -> dict[str, object]:
    text = scripted(
        {
            "a": [{"tool": "greet", "args": {"name": "Ada"}}, answer("Ada was greeted")],
            "b": [vote("a", "it greeted"), vote("a", "it greeted")],
        },
        features=features,
    )
    return yaml.safe_load(text)  # type: ignore[no-any-return]


def test_a_registered_feature_gives_its_tool_and_counts_every_request(greeting, tmp_path):
    events: list[RunEvent] = []
    result = massgen_cli.run(
        config(greeting={"greeting": "Hello"}), "Greet Ada", state_dir=tmp_path, on_event=events.append
    )
    assert result.answer == "Ada was greeted"
    greeted = [event for event in events if isinstance(event, ToolFinished) and event.name == "greet"]
    assert [event.summary for event in greeted] == ["Hello, Ada!"], "the tool ran with the config's greeting"
    (opened,) = greeting_feature.OPENED
    calls = Counter(event.agent_id for event in events if isinstance(event, AgentUsage))
    assert opened.requests == calls, "the hook saw each request an agent sent, once"
    assert opened.requests["a"] >= 2, "the tool call and the answer after it"


def test_without_its_settings_the_feature_is_off(greeting, tmp_path):
    events: list[RunEvent] = []
    plain = scripted({"a": [answer("no greeting")], "b": [vote("a", "fine")]})
    assert massgen_cli.run(yaml.safe_load(plain), "hi", state_dir=tmp_path, on_event=events.append).answer
    assert greeting_feature.OPENED == []


def test_its_settings_are_checked_by_its_model_and_named_by_their_path(greeting, tmp_path):
    with pytest.raises(ConfigError, match=r"features\.greeting\.greetin"):
        massgen_cli.run(config(greeting={"greetin": "Hello"}), "hi", state_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"features\.farewell: no feature takes settings"):
        massgen_cli.run(config(farewell={"word": "bye"}), "hi", state_dir=tmp_path)


def test_a_declaration_must_name_declared_features():
    stray = Feature("stray", wanted=lambda opening: True, open=lambda opening: Opened(), needs=("nothing",))
    with pytest.raises(ValueError, match="names no declared feature"):
        registry.register(stray)
    assert "stray" not in [feature.name for feature in registry.declared()]


def test_features_that_wait_for_each_other_are_refused():
    first = Feature("first", wanted=lambda o: True, open=lambda o: None, steps_after=("second",))
    second = Feature("second", wanted=lambda o: True, open=lambda o: None, steps_after=("first",))
    with pytest.raises(ValueError, match="wait for each other"):
        registry.ordered([first, second], lambda feature: feature.steps_after)

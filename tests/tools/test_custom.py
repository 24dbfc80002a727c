"""Custom tools loaded from a Python file in the suite: schemas from signatures and docstrings, sync
and async functions, preset arguments and the workspace, and errors at start naming the YAML path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.errors import ConfigError
from massgen_cli.events import ToolCall
from massgen_cli.tools.toolbox import Toolbox, build_toolbox

FUNCTIONS = str(Path(__file__).with_name("custom_functions.py"))


def toolbox(*entries: dict, cwd: str | None = None) -> Toolbox:  # type: ignore[type-arg]
    backend = {"type": "scripted", "responses": ["x"], "custom_tools": list(entries), "cwd": cwd}
    return build_toolbox(AgentConfig.model_validate({"id": "a", "backend": backend}), 0, OrchestratorConfig())


def run(box: Toolbox, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return asyncio.run(box.run(ToolCall("c", name, dict(arguments))))


def test_schema_and_description_come_from_the_function():
    box = toolbox({"name": "add", "function": "add_numbers", "path": FUNCTIONS, "category": "math"})
    (spec,) = box.specs
    assert spec.name == "custom_tool__add"
    assert spec.description == "Add two whole numbers."
    assert spec.parameters["required"] == ["a"]
    assert spec.parameters["properties"]["a"] == {
        "description": "The first number.",
        "title": "A",
        "type": "integer",
    }
    assert spec.parameters["properties"]["b"]["default"] == 2
    assert run(box, "custom_tool__add", a=3, b=4).text == '{"sum": 7}'
    bad = run(box, "custom_tool__add", a="three")
    assert not bad.ok and "invalid arguments: a:" in bad.text


def test_lists_of_names_and_functions_sync_and_async():
    box = toolbox({"name": ["add", "shout"], "function": ["add_numbers", "shout"], "path": FUNCTIONS})
    assert run(box, "custom_tool__shout", text="hi").text == "HI!"
    assert run(box, "custom_tool__add", a=1).text == '{"sum": 3}'


def test_preset_arguments_and_the_workspace_are_passed_unseen(tmp_path: Path):
    entry = {
        "name": "note",
        "function": "note_in_workspace",
        "path": FUNCTIONS,
        "preset_args": {"prefix": "> "},
    }
    box = toolbox(entry, cwd=str(tmp_path / "ws"))
    spec = next(spec for spec in box.specs if spec.name == "custom_tool__note")
    assert set(spec.parameters["properties"]) == {"note"}
    assert run(box, "custom_tool__note", note="remember").text == "noted"
    assert (tmp_path / "ws" / "note.txt").read_text() == "> remember"


def test_a_failing_function_is_a_result():
    box = toolbox({"name": "broken", "function": "broken", "path": FUNCTIONS})
    result = run(box, "custom_tool__broken", value="x")
    assert not result.ok and result.text == "Error: RuntimeError: cannot handle x"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "x", "function": "add_numbers", "path": "missing.py"}, "file missing.py does not exist"),
        ({"name": "x", "function": "nothing_here", "path": FUNCTIONS}, "defines no function 'nothing_here'"),
        (
            {"name": ["a", "b", "c"], "function": ["add_numbers", "shout"], "path": FUNCTIONS},
            "'name' has 3 items",
        ),
    ],
)
def test_load_problems_name_the_yaml_path(entry, message):
    with pytest.raises(ConfigError) as raised:
        toolbox({"name": "ok", "function": "shout", "path": FUNCTIONS}, entry)
    assert str(raised.value).startswith("agents[0].backend.custom_tools[1]: ")
    assert message in str(raised.value)

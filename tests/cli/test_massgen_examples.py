"""MassGen's own example configs, as its release ships them, run for real through the command line (in
the test's process) against wire-format servers on 127.0.0.1: each provider's address is moved there by
its variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GEMINI_BASE_URL``, ``XAI_BASE_URL``,
``OPENROUTER_BASE_URL``), and a model that plays along answers every request (``PlayingModel``). The
sample covers OpenAI's Responses API, Chat Completions (OpenRouter), Anthropic's Messages, xAI, Gemini's
own API (with its Google Search and code execution), MCP servers, custom tools from MassGen's tree,
context paths, commands and permissions; each run must answer (exit 0, the answer on stdout,
summary.json)."""

from __future__ import annotations

import json
import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.config.massgen_release import opened_release
from tests.conftest import state_folder
from tests.media import write_png
from tests.servers.fake_gemini import FakeGeminiServer
from tests.servers.fake_providers import FakeProviderServer
from tests.servers.playing_model import FINAL_TEXT, NOTE, PlayingModel, images_in, looked_at

MCP_SERVER = "massgen/tests/mcp_test_server.py"
TWO_NUM = "custom_tool__two_num_tool"


@pytest.fixture(scope="module")
def release() -> Iterator[zipfile.ZipFile]:
    yield from opened_release()


@pytest.fixture
def checkout(
    release: zipfile.ZipFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeProviderServer]:
    """The current folder as a checkout of MassGen's tree (its configs and tool files), each provider
    pointed at a playing model (the server is yielded), and ``python`` (which MassGen's MCP test configs
    run) this Python."""
    wanted = [
        name
        for name in release.namelist()
        if name.startswith(("massgen/configs/", "massgen/tool/")) or name == MCP_SERVER
    ]
    release.extractall(tmp_path, wanted)
    # MassGen's MCP test server is one stand-alone file, run as `python -m massgen.tests.mcp_test_server`;
    # MassGen's own package __init__ (which imports its whole runtime) is not installed here.
    for package in ("massgen", "massgen/tests"):
        (tmp_path / package / "__init__.py").write_text("")
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    server = FakeGeminiServer(PlayingModel(), stands_for={"/xai/": "xai"}).start()
    root = server.root_url
    for variable, address in {
        "OPENAI_BASE_URL": f"{root}/v1",
        "ANTHROPIC_BASE_URL": root,
        "GEMINI_BASE_URL": f"{root}/gemini",
        "XAI_BASE_URL": f"{root}/xai/v1",
        "OPENROUTER_BASE_URL": f"{root}/openrouter/api/v1",
    }.items():
        monkeypatch.setenv(variable, address)
        monkeypatch.setenv(variable.replace("_BASE_URL", "_API_KEY"), f"test-key-{variable.lower()}-0000")
    before = {name for name in sys.modules if name.split(".")[0] == "massgen"}
    yield server
    server.stop()
    for name in {name for name in sys.modules if name.split(".")[0] == "massgen"} - before:
        del sys.modules[name]  # the stand-in of MassGen's tool types a run registered goes with the test


def summaries() -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(state_folder().rglob("summary.json"))]


CHAT, RESPONSES, MESSAGES = "chat/completions", "responses", "messages"
GEMINI = "streamGenerateContent?alt=sse"
WIRES = (CHAT, RESPONSES, MESSAGES, GEMINI)
EXAMPLES = {
    # Three wire formats in one turn: Gemini's own, OpenAI's Responses, Anthropic's Messages.
    "basic/multi/gemini_4o_claude.yaml": {"agents": 3, "wires": {GEMINI, RESPONSES, MESSAGES}},
    # Gemini 2.5 with Google Search and code execution on decides in JSON, its tools on in every request.
    "basic/multi/geminicode_4o_claude.yaml": {
        "agents": 3,
        "wires": {GEMINI, RESPONSES, MESSAGES},
        "gemini_tools": {"google_search", "code_execution"},
    },
    "providers/openai/gpt5_nano.yaml": {"agents": 3, "wires": {RESPONSES}},
    "providers/claude/claude.yaml": {"agents": 1, "wires": {MESSAGES}},
    "basic/single/single_openrouter_web_search.yaml": {"agents": 1, "wires": {CHAT}},
    "providers/others/grok_single_agent.yaml": {"agents": 1, "wires": {RESPONSES}},
    "tools/mcp/gpt5_nano_mcp_test.yaml": {"agents": 1, "wires": {RESPONSES}, "tool": "mcp__test_server__"},
    "tools/mcp/claude_mcp_test.yaml": {"agents": 1, "wires": {MESSAGES}, "tool": "mcp__test_server__"},
    "tools/custom_tools/gemini_custom_tool_example.yaml": {"agents": 1, "wires": {GEMINI}, "tool": TWO_NUM},
    "tools/custom_tools/claude_custom_tool_example.yaml": {"agents": 1, "wires": {MESSAGES}, "tool": TWO_NUM},
    "tools/custom_tools/grok3_mini_custom_tool_example.yaml": {
        "agents": 1,
        "wires": {RESPONSES},
        "tool": TWO_NUM,
    },
    "tools/code-execution/code_execution_use_case_simple.yaml": {"agents": 2, "wires": {GEMINI, RESPONSES}},
    "tools/filesystem/multiturn/two_gemini_flash_filesystem_multiturn.yaml": {
        "agents": 2,
        "wires": {GEMINI},
        "note": True,
    },
    "tools/permissions/per_agent_roles.yaml": {"agents": 2, "wires": {RESPONSES}},
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_a_massgen_example_config_answers(checkout: FakeProviderServer, name: str):
    expected = EXAMPLES[name]
    result = massgen("--config", f"massgen/configs/{name}", "What should we build next?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip(), "an answer on stdout"
    [summary] = summaries()
    assert summary["final_answer"].strip() == result.stdout.strip()
    assert len(summary["answers"]) >= 1 and len(summary["usage"]) == expected["agents"]
    if expected["agents"] > 1:
        assert summary["votes"] and summary["winner"] in summary["answers"], summary
    wires = {wire for request in checkout.requests for wire in WIRES if request.path.endswith(wire)}
    assert wires == expected["wires"]
    events = [
        json.loads(line) for line in next(state_folder().rglob("events.jsonl")).read_text().splitlines()
    ]
    finished = [e for e in events if e["type"] == "ToolFinished"]
    if "tool" in expected:
        assert any(e["name"].startswith(expected["tool"]) and e["ok"] for e in finished), finished
    if "gemini_tools" in expected:
        asked = [r.body["tools"] for r in checkout.requests if r.path.endswith(GEMINI)]
        assert asked and all(
            {"googleSearch": {}} in tools and {"codeExecution": {}} in tools for tools in asked
        )
        assert expected["gemini_tools"] <= {e["name"] for e in finished if e["ok"]}, finished
    if expected.get("note"):
        assert (Path.cwd() / NOTE).read_text() == FINAL_TEXT, "the final presentation wrote the context path"


LOOKING = {
    "tools/custom_tools/computer_use_example.yaml": RESPONSES,
    "tools/custom_tools/claude_computer_use_browser_example.yaml": MESSAGES,
}
"""MassGen's computer-use configs as shipped, whose ``understand_image`` (a file of MassGen's multimodal
tools, which needs MassGen's backends) is ours: the agent's own model looks at the image."""


@pytest.mark.parametrize("name", list(LOOKING))
def test_a_massgen_config_looks_at_an_image_with_understand_image(checkout: FakeProviderServer, name: str):
    image = write_png(Path.cwd() / "shot.png", seed=5, side=16)
    question = "Check shot.png with understand_image: does the page look right?"
    result = massgen("--config", f"massgen/configs/{name}", question)
    assert result.exit_code == 0, result.stderr
    wire = LOOKING[name]
    looks = [r.body for r in checkout.requests if r.path.endswith(wire) and not r.body.get("tools")]
    looks = [body for body in looks if images_in(body)]
    assert [images_in(body) for body in looks] == [[("image/png", len(image))]], "one look, at the image"
    events = [
        json.loads(line) for line in next(state_folder().rglob("events.jsonl")).read_text().splitlines()
    ]
    [finished] = [
        e for e in events if e["type"] == "ToolFinished" and e["name"] == "custom_tool__understand_image"
    ]
    assert finished["ok"], finished
    later = [json.dumps(r.body) for r in checkout.requests if r.path.endswith(wire) and r.body.get("tools")]
    assert any(looked_at(images_in(looks[0])) in text for text in later), "the model read what was seen"

"""The provider's own tools asked for with MassGen's keys, run through the command line against wire-format
servers on 127.0.0.1 (each provider's address moved there by its ``*_BASE_URL`` variable): OpenRouter's
web plugin, xAI's web search, X search and code interpreter, and Gemini's, which its OpenAI-compatible API
does not offer (said, and nothing sent in its place)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, write_config
from tests.servers.fake_providers import FakeProviderServer, openai_stream
from tests.servers.fake_responses import responses_stream


@pytest.fixture
def fake() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


def tools_run() -> list[tuple[str, bool]]:
    lines = (first_attempt_folder() / "events.jsonl").read_text().splitlines()
    return [(e["name"], e["ok"]) for e in map(json.loads, lines) if e["type"] == "ToolFinished"]


OPENROUTER = """
agents:
  - id: "openrouter_web_search_agent"
    backend:
      type: "openrouter"
      model: "deepseek/deepseek-r1"
      enable_web_search: true
{options}
ui:
  display_type: "textual_terminal"
  logging_enabled: true
"""


@pytest.mark.parametrize(
    ("options", "plugin", "search_options"),
    [
        ("", {"id": "web"}, None),
        (
            '      engine: "exa"\n      max_results: 3\n      search_prompt: "Recent sources:"\n'
            '      search_context_size: "high"',
            {"id": "web", "engine": "exa", "max_results": 3, "search_prompt": "Recent sources:"},
            {"search_context_size": "high"},
        ),
    ],
)
def test_openrouter_web_search_is_its_web_plugin(
    tmp_path, monkeypatch, fake, options, plugin, search_options
):
    """MassGen's single_openrouter_web_search.yaml (its options as written, then uncommented): the chat
    request carries OpenRouter's web plugin and no web search tool of ours."""
    fake.script(openai_stream("Quantum error correction passed a milestone."))
    monkeypatch.setenv("OPENROUTER_BASE_URL", f"{fake.root_url}/api/v1")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-0000")
    config = write_config(tmp_path, OPENROUTER.format(options=options))
    result = massgen("--config", str(config), "-q", "What is new in quantum computing?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Quantum error correction passed a milestone.\n"
    [request] = fake.requests
    assert request.path == "/api/v1/chat/completions"
    assert request.body["plugins"] == [plugin]
    assert request.body.get("web_search_options") == search_options
    assert "tools" not in request.body and "warning" not in result.stderr


GROK = """
agent:
  id: "grok_agent"
  backend:
    type: "grok"
    model: "grok-4"
    enable_web_search: true
    enable_x_search: true
    enable_code_execution: true
  system_message: "You are a helpful assistant"
ui:
  display_type: "textual_terminal"
  logging_enabled: true
"""


def test_grok_searches_the_web_and_x_and_runs_code_through_xais_responses_api(tmp_path, monkeypatch, fake):
    """MassGen's grok_single_agent.yaml with its commented tools on: xAI's server-side tools are offered on
    its Responses API as xAI documents them, and the calls xAI reports (X search as its own custom tool
    calls) show and are logged like ours."""
    x_search = {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "call_id": "xs_1",
        "name": "x_keyword_search",
        "input": json.dumps({"query": "Seattle news"}),
    }
    fake.script(
        responses_stream(
            "Seattle: the ferry strike ended.",
            searched="Seattle news today",
            provider_items=[x_search],
            ran=("print(len('Seattle'))", "7"),
        )
    )
    monkeypatch.setenv("XAI_BASE_URL", f"{fake.root_url}/v1")
    monkeypatch.setenv("XAI_API_KEY", "xai-test-0000")
    config = write_config(tmp_path, GROK)
    result = massgen("--config", str(config), "-q", "List today's news in Seattle")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Seattle: the ferry strike ended.\n"
    [request] = fake.requests
    assert request.path == "/v1/responses"
    assert request.body["tools"] == [
        {"type": "web_search"},
        {"type": "x_search"},
        {"type": "code_interpreter"},
    ]
    assert tools_run() == [("web_search", True), ("code_interpreter", True), ("x_keyword_search", True)]


GEMINI = """
agent:
  id: gemini
  backend:
    type: gemini
    model: gemini-2.5-flash
    enable_web_search: true
    enable_code_execution: true
"""


def test_gemini_search_and_code_execution_are_said_to_be_missing_and_nothing_is_faked(
    tmp_path, monkeypatch, fake
):
    """Gemini's OpenAI-compatible API (the one called) takes neither google_search nor code_execution:
    the run says so and sends no stand-in tool."""
    fake.script(openai_stream("Paris."))
    monkeypatch.setenv("GEMINI_BASE_URL", f"{fake.root_url}/v1beta/openai/")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-0000")
    config = write_config(tmp_path, GEMINI)
    result = massgen("--config", str(config), "Capital of France?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Paris.\n"
    for key in ("enable_web_search", "enable_code_execution"):
        assert f"agent.backend.{key}: gemini offers" in result.stderr
    assert "only through Gemini's own API (generateContent)" in result.stderr
    [request] = fake.requests
    assert request.path == "/v1beta/openai/chat/completions"
    assert "tools" not in request.body and "plugins" not in request.body

"""The provider's own tools asked for with MassGen's keys, run through the command line against wire-format
servers on 127.0.0.1 (each provider's address moved there by its ``*_BASE_URL`` variable): OpenRouter's
web plugin, xAI's web search, X search and code interpreter, Gemini's Google Search and code execution on
its own API, and Gemini's OpenAI-compatible API, which offers neither (said, and nothing sent in their
place)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, write_config
from tests.servers.fake_gemini import FakeGeminiServer, gemini_stream
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
    fake.stands_for["/v1/"] = "xai"  # its Responses API, with xAI's own tools
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
  id: "gemini_agent"
  backend:
    type: "gemini"
    model: "gemini-2.5-flash"
{keys}
"""
SEARCH_AND_RUN = "    enable_web_search: true\n    enable_code_execution: true\n"


@pytest.mark.parametrize("keys", [SEARCH_AND_RUN, ""])
def test_gemini_searches_with_google_and_runs_code_on_its_own_api(tmp_path, monkeypatch, keys):
    """MassGen's single_flash2.5.yaml, with its commented code execution on (then both off): Gemini's own
    API gets google_search and code_execution (nothing when they are off), and what Gemini searched and
    ran shows and is logged like our tools; the answer is Gemini's text as it came."""
    server = FakeGeminiServer().start()
    try:
        server.script(
            gemini_stream(
                "Seattle: the ferry strike ended.",
                searched=["Seattle news today"],
                sources=[("Seattle Times", "https://seattletimes.example/ferry")],
                ran=("print(len('Seattle'))", "7\n", "OUTCOME_OK"),
            )
            if keys
            else gemini_stream("Seattle: the ferry strike ended.")
        )
        monkeypatch.setenv("GEMINI_BASE_URL", server.root_url)
        monkeypatch.setenv("GOOGLE_API_KEY", "google-test-0000")
        config = write_config(tmp_path, GEMINI.format(keys=keys))
        result = massgen("--config", str(config), "List today's news in Seattle")
    finally:
        server.stop()
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Seattle: the ferry strike ended.\n"
    [request] = server.requests
    assert request.path == "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    if not keys:
        assert "tools" not in request.body and tools_run() == []
        return
    assert request.body["tools"] == [{"googleSearch": {}}, {"codeExecution": {}}]
    assert tools_run() == [("code_execution", True), ("google_search", True)]
    assert "warning" not in result.stderr.lower()


def test_geminis_openai_compatible_api_takes_neither_and_says_so(tmp_path, monkeypatch, fake):
    """A base_url on Gemini's OpenAI-compatible API calls that API, which takes neither google_search nor
    code_execution: the run says so and sends no stand-in tool."""
    fake.script(openai_stream("Paris."))
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-0000")
    compatible = f'    base_url: "{fake.root_url}/v1beta/openai/"\n' + SEARCH_AND_RUN
    config = write_config(tmp_path, GEMINI.format(keys=compatible))
    result = massgen("--config", str(config), "Capital of France?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Paris.\n"
    for key in ("enable_web_search", "enable_code_execution"):
        assert f"agent.backend.{key}: gemini offers" in result.stderr
    assert "only through Gemini's own API (generateContent)" in result.stderr
    [request] = fake.requests
    assert request.path == "/v1beta/openai/chat/completions"
    assert "tools" not in request.body and "plugins" not in request.body

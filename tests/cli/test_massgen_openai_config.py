"""A MassGen config for OpenAI (no base_url; the address comes from OPENAI_BASE_URL as the SDK reads it)
run through the command line against a wire-format Responses server: reasoning, verbosity, web search and
the code interpreter each reach the request and their results reach the user."""

from __future__ import annotations

import json

from tests.conftest import first_attempt_folder, run_cli, write_config
from tests.servers.fake_providers import FakeProviderServer
from tests.servers.fake_responses import responses_stream

MASSGEN_CONFIG = """
agent:
  id: "gpt5"
  backend:
    type: "openai"
    model: "gpt-5"
    reasoning:
      effort: "medium"
      summary: "auto"
    text:
      verbosity: "low"
    enable_web_search: true
    enable_code_interpreter: true
ui:
  display_type: "rich_terminal"
  logging_enabled: true
"""


def test_a_massgen_openai_config_runs_each_feature_against_the_responses_server(tmp_path, monkeypatch):
    fake = FakeProviderServer().start()
    try:
        fake.script(
            responses_stream(
                "Paris has about 2.1 million people.",
                summary="Look it up, then compute.",
                encrypted="enc-1",
                searched="population of Paris",
                ran=("print(2102650 // 1000)", "2102"),
                reasoning_tokens=4,
            )
        )
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.root_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-massgen-config-0000")
        config = write_config(tmp_path, MASSGEN_CONFIG)
        result = run_cli("--config", str(config), "How many people live in Paris?")
    finally:
        fake.stop()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Paris has about 2.1 million people."
    [request] = [r for r in fake.requests if r.path.endswith("/responses")]
    body = request.body
    assert body["model"] == "gpt-5" and body["stream"] is True
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["text"]["verbosity"] == "low"
    assert {"type": "web_search"} in body["tools"]
    assert {"type": "code_interpreter", "container": {"type": "auto"}} in body["tools"]
    events = [json.loads(line) for line in (first_attempt_folder() / "events.jsonl").read_text().splitlines()]
    tools = [(e["name"], e.get("ok")) for e in events if e["type"] == "ToolFinished"]
    assert tools == [("web_search", True), ("code_interpreter", True)]
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["tool_calls"] == {"gpt5": {"calls": 2, "failed": 0}}
    assert summary["usage"]["gpt5"]["reasoning_tokens"] == 4

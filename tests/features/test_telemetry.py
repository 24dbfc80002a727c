"""Traces over OpenTelemetry: ``massgen --otel`` (and MassGen's ``--logfire``) sends a span per turn,
attempt, agent step, model call and tool call to the collector ``OTEL_EXPORTER_OTLP_ENDPOINT`` names,
over OTLP/HTTP, with the GenAI semantic conventions' attributes, flushed before the process exits. A
real collector on 127.0.0.1 receives and decodes them; a run that does not ask for traces loads none of
the SDK."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli_process, write_config
from tests.servers.otlp_collector import OtlpCollector, ReceivedSpan

CONFIG = """
agents:
  - id: writer
    backend:
      type: scripted
      model: scripted-writer
      cwd: ws_writer
      responses:
        - calls:
            - {tool: write_file, args: {path: notes.md, content: "Paris"}}
        - {tool: new_answer, args: {content: "Paris."}}
        - {tool: vote, args: {agent_id: writer, reason: "it is right"}}
        - "Paris."
  - id: judge
    backend:
      type: scripted
      responses:
        - {tool: vote, args: {agent_id: writer, reason: "correct"}}
"""
SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2


@pytest.fixture
def collector() -> Iterator[OtlpCollector]:
    server = OtlpCollector().start()
    yield server
    server.stop()


def traced_run(tmp_path: Path, collector: OtlpCollector, flag: str, monkeypatch) -> list[ReceivedSpan]:  # type: ignore[no-untyped-def]
    write_config(tmp_path, CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "capital-check")
    done = run_cli_process("--config", "config.yaml", flag, "Capital of France?")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("Paris."), done.stdout
    return collector.received()  # the process has exited: what it flushed has arrived


def named(spans: list[ReceivedSpan], prefix: str) -> list[ReceivedSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


def test_otel_sends_the_turn_s_spans_with_gen_ai_attributes(tmp_path: Path, collector, monkeypatch):
    spans = traced_run(tmp_path, collector, "--otel", monkeypatch)
    assert set(collector.paths) == {"/v1/traces"}
    [turn] = named(spans, "turn ")
    [attempt] = named(spans, "attempt ")
    steps, calls, tools = named(spans, "invoke_agent "), named(spans, "chat "), named(spans, "execute_tool ")
    assert {span.trace_id for span in spans} == {turn.trace_id}, "one trace for the turn"
    assert turn.parent_span_id == b"" and attempt.parent_span_id == turn.span_id
    assert turn.attributes["massgen.winner"] == "writer" and turn.attributes["gen_ai.usage.input_tokens"] > 0
    assert turn.resource["service.name"] == "capital-check", "OTEL_SERVICE_NAME is honoured"

    assert {step.attributes["gen_ai.agent.name"] for step in steps} == {"writer", "judge"}
    assert all(step.parent_span_id == attempt.span_id for step in steps)
    assert {step.attributes["gen_ai.operation.name"] for step in steps} == {"invoke_agent"}
    assert "new_answer" in {step.attributes.get("massgen.decision") for step in steps}

    writer_calls = [call for call in calls if call.attributes["gen_ai.agent.name"] == "writer"]
    assert writer_calls and all(call.kind == SPAN_KIND_CLIENT for call in calls)
    first = writer_calls[0]
    assert first.name == "chat scripted-writer"
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.provider.name"] == first.attributes["gen_ai.system"] == "scripted"
    assert first.attributes["gen_ai.request.model"] == "scripted-writer"
    assert (
        first.attributes["gen_ai.usage.input_tokens"] > 0
        and first.attributes["gen_ai.usage.output_tokens"] > 0
    )
    assert first.attributes["gen_ai.conversation.id"] == turn.attributes["gen_ai.conversation.id"]
    step_ids = {step.span_id for step in steps}
    assert first.parent_span_id in step_ids, "a step's call is under its step"

    assert not any("gen_ai.input.messages" in call.attributes for call in calls), "no content unless asked"
    [tool] = tools
    assert tool.name == "execute_tool write_file" and tool.parent_span_id in step_ids
    assert tool.attributes["gen_ai.tool.name"] == "write_file" and tool.attributes["gen_ai.tool.call.id"]
    assert tool.status_code != STATUS_ERROR
    assert (tmp_path / "ws_writer" / "notes.md").read_text() == "Paris"


def test_the_messages_themselves_go_only_when_asked_and_redacted(tmp_path: Path, collector, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("DEMO_API_KEY", "sk-demo-0123456789abcdef")
    write_config(tmp_path, CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    done = run_cli_process("--config", "config.yaml", "--otel", "Capital of France? sk-demo-0123456789abcdef")
    assert done.returncode == 0, done.stderr[-3000:]
    spans = collector.received()
    first = next(c for c in named(spans, "chat ") if c.attributes["gen_ai.agent.name"] == "writer")
    asked = json.loads(first.attributes["gen_ai.input.messages"])
    assert asked[-1]["role"] == "user" and "Capital of France?" in asked[-1]["parts"][0]["content"]
    assert "sk-demo-0123456789abcdef" not in first.attributes["gen_ai.input.messages"], "secrets redacted"
    assert json.loads(first.attributes["gen_ai.system_instructions"])[0]["type"] == "text"
    [reply] = json.loads(first.attributes["gen_ai.output.messages"])
    call = next(part for part in reply["parts"] if part["type"] == "tool_call")
    assert reply["role"] == "assistant" and call["name"] == "write_file"
    assert call["arguments"] == {"path": "notes.md", "content": "Paris"}
    [tool] = named(spans, "execute_tool ")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {
        "path": "notes.md",
        "content": "Paris",
    }
    assert tool.attributes["gen_ai.tool.call.result"]


def test_massgen_s_logfire_flag_sends_the_same_traces(tmp_path: Path, collector, monkeypatch):
    spans = traced_run(tmp_path, collector, "--logfire", monkeypatch)
    assert named(spans, "turn ") and named(spans, "chat ")


PROBE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from massgen_cli.app import MassGenApp
    from massgen_cli.config import load_config

    app = MassGenApp(load_config(Path(sys.argv[1])), state_dir=Path(sys.argv[2]))
    try:
        app.ask("Capital of France?")
    finally:
        app.close()
    print(json.dumps(sorted(name for name in sys.modules if name.startswith("opentelemetry"))))
    """
)


def test_a_run_that_asks_for_no_traces_imports_none_of_the_sdk(tmp_path: Path):
    config = write_config(tmp_path, CONFIG)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(config), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=tmp_path,
    )
    assert done.stdout.splitlines()[-1] == "[]"

"""Long scripted sessions stay inside the context window, with the monitoring lines shown."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from massgen_cli.backends.base import ToolSpec
from massgen_cli.memory.context.monitor import ContextMonitor
from tests.conftest import run_cli, write_config

LONG_ANSWER = " ".join(f"fact{i} is remembered here" for i in range(40))


def request_tokens(path: Path, monitor: ContextMonitor) -> int:
    record = json.loads(path.read_text())
    tools = [ToolSpec(name, "", {}) for name in record["tools"]]
    return monitor.usage(record["messages"], tools, record["response_schema"]).tokens


def all_requests() -> list[Path]:
    return sorted((Path(os.environ["MASSGEN_HOME"]) / "massgen_logs").rglob("requests/*.json"))


def test_forty_turn_session_never_sends_over_the_trigger(tmp_path):
    config = write_config(
        tmp_path,
        f"""
        agent:
          id: solo
          context_window: 1500
          backend:
            type: scripted
            responses: ["{LONG_ANSWER}"]
        """,
    )
    questions = "".join(
        f"Question {n}: tell me everything about topic {n} again please.\n" for n in range(40)
    )
    result = run_cli("--config", str(config), stdin=questions, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count(LONG_ANSWER) == 40
    monitor = ContextMonitor("scripted", 1500, trigger_threshold=0.75, target_ratio=0.4)
    requests = all_requests()
    assert len(requests) == 40
    assert max(request_tokens(path, monitor) for path in requests) <= monitor.trigger_tokens
    assert re.search(r"📊 \[solo\] Context Window \(Turn \d+\): ", result.stderr), "said once it matters"
    assert "📊 [solo] Context Window (Turn 1): " not in result.stderr, "not while the window is nearly empty"
    assert "🔄 [solo] Attempting compression" in result.stderr
    assert "📦 [solo] Context compressed: Removed " in result.stderr
    last = json.loads(requests[-1].read_text())["messages"]
    assert last[0]["content"].startswith("[Conversation summary]")


def test_three_agents_stay_under_the_trigger(in_process):
    vote = '{tool: vote, args: {agent_id: agent1, reason: "ok"}}'
    run = in_process(
        f"""
        agents:
          - id: a
            context_window: 2500
            backend:
              type: scripted
              responses: [{{tool: new_answer, args: {{content: "{LONG_ANSWER}"}}}}, {vote}]
          - id: b
            context_window: 2500
            backend: {{type: scripted, responses: [{vote}]}}
        orchestrator: {{final_presentation: reuse}}
        """,
        interactive=True,
    )
    for turn in range(12):
        # the scripted backends repeat their last entry, so later turns only vote: reset to answer again
        for agent in run.app.agents:
            agent.backend.inner.requests.clear()  # type: ignore[attr-defined]
        result = run.app.ask(f"Question {turn}: explain topic {turn} in depth.")
        assert result.final_answer == LONG_ANSWER
    monitor = ContextMonitor("scripted", 2500, trigger_threshold=0.75, target_ratio=0.4)
    assert max(request_tokens(path, monitor) for path in all_requests()) <= monitor.trigger_tokens
    assert "Context compressed" in run.err.getvalue()
    thread = run.app.run.threads.get_history("a")
    assert thread[0]["content"].startswith("[Conversation summary]")


def test_context_length_error_shrinks_and_resends(in_process):
    run = in_process(
        """
        agent:
          id: solo
          backend:
            type: scripted
            responses: [{error: context_length}, "Fits now."]
        """
    )
    result = run.app.ask("Q?")
    assert result.final_answer == "Fits now."
    assert "The provider reported a context overflow" in run.err.getvalue()


def test_stream_budget_stops_a_runaway_response(in_process):
    run = in_process(
        f"""
        agent:
          id: solo
          context_window: 300
          memory: {{compression: {{on_stream_budget: stop}}}}
          backend:
            type: scripted
            responses: ["{LONG_ANSWER}"]
        """
    )
    result = run.app.ask("Q?")
    assert result.final_answer is not None and len(result.final_answer) < len(LONG_ANSWER)
    assert "Response near its budget" in run.err.getvalue()

"""The console's lines for the features' events: a hook that denied or changed a tool call, a subagent team
that started or finished (with its cost); said with the live view and without it, from the events a real
run emits (the command line run in this process)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from massgen_cli.event_lines import feature_notice
from massgen_cli.events import Notice
from massgen_cli.feature_events import HookDecided, SubagentFinished, SubagentStarted
from massgen_cli.ui import ConsoleView
from tests.cli.in_process_cli import massgen
from tests.scripted import scripted

DENIED = HookDecided("before_tool", "guard.py", "deny", "no rm here", "a", "execute_command", "c1")
REWROTE = HookDecided("before_tool", "quiet", "rewrite", "piped through head", "a", "execute_command", "c2")
STARTED = SubagentStarted("a", "research", "Find the capital of France.", "ws/subagents/research/workspace")
FINISHED = SubagentFinished("a", "research", "completed", "Paris.", "", 1.5, 1200, 300, 0.0123)


def said(*, live: bool) -> str:
    err = io.StringIO()
    console = Console(file=err, width=160, force_terminal=live, color_system=None)
    view = ConsoleView(["a"], console=console, out=io.StringIO(), live=live)
    view.begin_turn()
    for event in (DENIED, REWROTE, HookDecided("before_tool", "quiet", "allow"), STARTED, FINISHED):
        view(event)
    view.end_turn()
    return err.getvalue()


@pytest.mark.parametrize("live", [False, True])
def test_hooks_and_subagents_are_said_with_and_without_the_live_view(live):
    shown = said(live=live)
    assert "[a] hook guard.py denied execute_command: no rm here" in shown
    assert "[a] hook quiet rewrote the arguments of execute_command: piped through head" in shown
    assert "allow" not in shown, "a hook that let the call go adds no line"
    assert "[a] subagent research started: Find the capital of France." in shown
    assert "[a] subagent research completed in 1.5s · 1,500 tokens · $0.0123" in shown


def test_the_levels_say_what_changed_the_run():
    assert feature_notice(DENIED) == Notice("warning", "[a] hook guard.py denied execute_command: no rm here")
    failed = HookDecided("turn_start", "hello.py", "failed", "timed out after 5s")
    assert feature_notice(failed) == Notice(
        "warning", "hook hello.py failed at turn_start, the run goes on: timed out after 5s"
    )
    stopped = SubagentFinished("a", "research", "cost_cap", "", "spending cap reached", 2.0, 10, 5, None)
    assert feature_notice(stopped) == Notice(
        "warning", "[a] subagent research cost_cap in 2.0s · 15 tokens · cost unknown: spending cap reached"
    )


def test_a_real_runs_denied_command_and_subagent_are_said_on_the_console():
    deny = Path("deny_rm.py")
    deny.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "if event['tool_input'].get('command', '').startswith('rm '):\n"
        "    print('removing files is not allowed here', file=sys.stderr)\n"
        "    sys.exit(2)\n",
        encoding="utf-8",
    )
    hooks = {"PreToolUse": [{"matcher": "execute_command", "command": [sys.executable, str(deny.resolve())]}]}
    team = {"agents": [{"id": "helper", "backend": {"type": "scripted", "responses": ["Paris."]}}]}
    lead = [
        {"tool": "execute_command", "args": {"command": "rm notes.txt"}},
        {"tool": "spawn_subagents", "args": {"tasks": [{"task": "Find the capital of France."}]}},
        "Paris, as my subagent found.",
    ]
    orchestrator = {"coordination": {"enable_subagents": True, "subagent_orchestrator": team}}
    backends = {"lead": {"cwd": "ws", "enable_mcp_command_line": True}}
    Path("config.yaml").write_text(
        scripted({"lead": lead}, backends=backends, hooks=hooks, orchestrator=orchestrator), encoding="utf-8"
    )
    run = massgen("-c", "config.yaml", "Capital of France?")
    assert run.exit_code == 0 and run.stdout.strip() == "Paris, as my subagent found.", run.stderr
    assert (
        "[lead] hook " in run.stderr
        and " denied execute_command: removing files is not allowed here" in run.stderr
    )
    kept = next(Path("ws/subagents").iterdir())
    result = json.loads((kept / "result.json").read_text())
    assert f"[lead] subagent {kept.name} started: Find the capital of France." in run.stderr
    tokens = sum(result["usage"][key] for key in ("input_tokens", "output_tokens"))
    assert (
        f"[lead] subagent {kept.name} completed in " in run.stderr
        and f"· {tokens:,} tokens · free" in run.stderr
    )

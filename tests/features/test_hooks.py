"""The config's hooks, run for real: commands as processes and Python callables by dotted path, before
and after tool calls of scripted agents and at the turn's start and end; each decision an event in the
run's log and report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import massgen_cli
from massgen_cli.errors import ConfigError
from massgen_cli.events import RunEvent, ToolFinished
from massgen_cli.feature_events import HookDecided
from massgen_cli.runlogs.account import account
from massgen_cli.runlogs.reader import all_runs
from tests.features import hook_handlers
from tests.scripted import scripted

SEEN = "{echo}"
DENY_RM = """\
import json, sys
event = json.load(sys.stdin)
command = event["tool_input"].get("command", "")
if command.startswith("rm "):
    print(f"{event['tool_name']}: removing files is not allowed here", file=sys.stderr)
    sys.exit(2)
"""


def hook_script(folder: Path, name: str, text: str) -> list[str]:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return [sys.executable, str(path)]


def solo(responses: list[Any], run_hooks: dict[str, Any], **backend: Any) -> dict[str, Any]:
    """One scripted agent with a workspace and the command tool, and the run's hooks."""
    keys = {"cwd": "workspace", "enable_mcp_command_line": True, **backend}
    return yaml.safe_load(scripted({"solo": responses}, backends={"solo": keys}, hooks=run_hooks))


def command(text: str) -> dict[str, Any]:
    return {"tool": "execute_command", "args": {"command": text}}


def echo(pattern: str) -> dict[str, Any]:
    """A reply that says what the model was sent last that matches ``pattern``."""
    return {"text": SEEN, "echo": pattern}


def run(
    config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[RunEvent]]:
    monkeypatch.chdir(tmp_path)
    events: list[RunEvent] = []
    result = massgen_cli.run(config, "Tidy up.", state_dir=tmp_path / "state", on_event=events.append)
    return result.answer or "", events


def decisions(events: list[RunEvent]) -> list[HookDecided]:
    return [event for event in events if isinstance(event, HookDecided)]


def test_a_hook_command_denies_a_command_and_the_agent_reads_why(tmp_path, monkeypatch):
    deny = hook_script(tmp_path, "deny_rm.py", DENY_RM)
    hooks = {
        "PreToolUse": [{"matcher": "execute_command", "type": "command", "command": deny, "timeout": 20}]
    }
    responses = [
        command("echo kept > kept.txt"),
        command("rm kept.txt"),
        echo(r"Error: not run: denied[^\n]*"),
    ]
    answer, events = run(solo(responses, hooks), tmp_path, monkeypatch)
    assert (tmp_path / "workspace" / "kept.txt").is_file(), "the allowed command ran; the denied one did not"
    assert "execute_command: removing files is not allowed here" in answer, "the agent read the reason"
    assert "denied by the hook" in answer
    allowed, denied = decisions(events)
    assert (allowed.decision, denied.decision) == ("allow", "deny")
    assert denied.tool == "execute_command" and denied.agent_id == "solo"
    assert denied.reason == "execute_command: removing files is not allowed here"
    finished = [event for event in events if isinstance(event, ToolFinished)]
    assert [event.ok for event in finished] == [True, False]
    assert denied.call_id == finished[1].call_id


def test_python_hooks_rewrite_arguments_and_add_to_results(tmp_path, monkeypatch):
    hooks = {
        "before_tool": [
            {"matcher": "execute_command", "handler": "tests.features.hook_handlers.quieter_commands"}
        ],
        "PostToolUse": [{"handler": "tests.features.hook_handlers.note_after"}],
    }
    responses = [command("printf 'one\\ntwo\\n'"), echo(r"exit code: 0\n\S+\n+\[checked \w+\]")]
    answer, events = run(solo(responses, hooks), tmp_path, monkeypatch)
    assert answer.split() == ["exit", "code:", "0", "one", "[checked", "execute_command]"], "one line kept"
    rewrite, added = decisions(events)
    assert rewrite.decision == "rewrite" and "| head -n 1" in rewrite.reason
    assert (added.point, added.decision) == ("after_tool", "add")


def test_an_agents_own_hooks_replace_the_runs_with_override(tmp_path, monkeypatch):
    deny = hook_script(tmp_path, "deny_rm.py", DENY_RM)
    run_hooks = {"PreToolUse": [{"command": deny}]}
    own = {
        "PreToolUse": {
            "override": True,
            "hooks": [{"matcher": "write_*", "handler": "tests.features.hook_handlers.deny_writes"}],
        }
    }
    responses = [
        {
            "calls": [
                command("rm -f nothing"),
                {"tool": "write_file", "args": {"path": "a.txt", "content": "x"}},
            ]
        },
        "done",
    ]
    answer, events = run(solo(responses, run_hooks, hooks=own), tmp_path, monkeypatch)
    assert answer == "done"
    (denied,) = decisions(events)
    assert (denied.tool, denied.decision) == ("write_file", "deny")
    assert denied.reason == "write_file is not allowed in this run"
    assert not (tmp_path / "workspace" / "a.txt").exists()


def test_a_hook_that_times_out_lets_the_call_go_on_unless_it_fails_closed(tmp_path, monkeypatch):
    # a hook that never answers (it waits on an event nobody sets): only its time limit ends it
    slow = hook_script(tmp_path, "stuck.py", "import threading\nthreading.Event().wait()\n")
    hooks = {
        "PreToolUse": [
            {"command": slow, "timeout": 0.5},
            {"command": slow, "timeout": 0.5, "matcher": "write_file", "fail_closed": True},
        ]
    }
    responses = [
        {
            "calls": [
                command("echo ran > ran.txt"),
                {"tool": "write_file", "args": {"path": "b.txt", "content": "x"}},
            ]
        },
        "done",
    ]
    _, events = run(solo(responses, hooks), tmp_path, monkeypatch)
    assert (tmp_path / "workspace" / "ran.txt").is_file(), "a failed hook does not stop the call"
    assert not (tmp_path / "workspace" / "b.txt").exists(), "a failed fail_closed hook denies it"
    by_tool = {(event.tool, event.decision): event.reason for event in decisions(events)}
    assert by_tool[("execute_command", "failed")] == "timed out after 0.5s"
    assert by_tool[("write_file", "deny")] == "the hook failed (timed out after 0.5s)"


def test_turn_hooks_hear_the_turn_and_the_log_and_report_say_each_decision(tmp_path, monkeypatch):
    hook_handlers.HEARD.clear()
    deny = hook_script(tmp_path, "deny_rm.py", DENY_RM)
    hooks = {
        "turn_start": [{"handler": "tests.features.hook_handlers.hear_turn"}],
        "turn_end": [{"handler": "tests.features.hook_handlers.hear_turn"}],
        "PreToolUse": [{"command": deny}],
    }
    answer, events = run(solo([command("rm x"), "gave up"], hooks), tmp_path, monkeypatch)
    assert answer == "gave up"
    start, end = hook_handlers.HEARD
    assert (start["hook_type"], start["question"], start["turn"]) == ("turn_start", "Tidy up.", 1)
    assert (end["hook_type"], end["answer"], end["winner"], end["status"]) == (
        "turn_end",
        "gave up",
        "solo",
        "answered",
    )
    assert [(e.point, e.decision) for e in decisions(events)] == [
        ("turn_start", "heard"),
        ("before_tool", "deny"),
        ("turn_end", "heard"),
    ]
    logged = (tmp_path / "state").rglob("events.jsonl")
    lines = [json.loads(line) for path in logged for line in path.read_text().splitlines()]
    assert [line["decision"] for line in lines if line["type"] == "HookDecided"] == ["heard", "deny", "heard"]
    told = "\n".join(account(all_runs(tmp_path / "state")))
    assert "hooks" in told and "execute_command denied by" in told


def test_a_handler_that_cannot_be_imported_stops_the_run_before_it_starts(tmp_path, monkeypatch):
    hooks = {"PreToolUse": [{"handler": "tests.features.no_such_module.check"}]}
    with pytest.raises(ConfigError, match="cannot be imported"):
        run(solo(["x"], hooks), tmp_path, monkeypatch)
    with pytest.raises(ConfigError, match="exactly one of 'handler'"):
        run(solo(["x"], {"PreToolUse": [{"matcher": "*"}]}), tmp_path, monkeypatch)

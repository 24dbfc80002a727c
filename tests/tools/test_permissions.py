"""What MassGen's permission settings take away from an agent and refuse: ``exclude_file_operation_mcps``
(only write_file and edit_file of the file tools), the ``permissions`` engine (roles, action(target)
rules, catastrophic commands, the automation policy, the run-without-approval budget),
``disallowed_tools`` (ours and Claude Code's names, ``Bash(glob)``) and Claude Code's plan mode."""

from __future__ import annotations

import json

import pytest

from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.permission_rules import PermissionsConfig
from massgen_cli.tools.permissions import PermissionEngine, ToolGate
from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, write_config
from tests.scripted import answer, scripted, vote

FILE_TOOLS = {"read_file", "list_directory", "search_files", "write_file", "edit_file"}


def call(tool: str, **args: object) -> dict:
    return {"calls": [{"tool": tool, "args": args}]}


def offered(run, agent_id: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {tool.name for tool in run.requests(agent_id)[0].tools}


def finished() -> list[tuple[str, bool, str]]:
    lines = (first_attempt_folder() / "events.jsonl").read_text().splitlines()
    return [(e["name"], e["ok"], e["summary"]) for e in map(json.loads, lines) if e["type"] == "ToolFinished"]


def test_excluded_file_operation_tools_leave_write_and_edit_and_reading_goes_through_commands(in_process):
    """As MassGen's test_minimal_mcps.yaml: with the command tool beside them, only write_file and
    edit_file of the file tools are offered; the agent writes a file and reads it back with a command."""
    writer = [
        call("write_file", path="notes.md", content="Paris\n"),
        call("execute_command", command="cat notes.md"),
        answer("Paris"),
    ]
    backend = {"cwd": "ws", "enable_mcp_command_line": True, "exclude_file_operation_mcps": True}
    run = in_process(scripted({"writer": writer}, backends={"writer": backend}))
    assert run.app.ask("Capital of France?").final_answer == "Paris"
    assert offered(run, "writer") & FILE_TOOLS == {"write_file", "edit_file"}
    assert "execute_command" in offered(run, "writer")
    assert "Paris" in json.dumps(run.requests("writer")[2].messages), "read back through the command"


def test_a_read_only_role_is_offered_no_write_or_command_tool_and_the_other_role_keeps_them(tmp_path):
    """MassGen's per_agent_roles.yaml, its agents scripted: the researcher (read-only) sees no write or
    command tool; the implementer (read-write, never a force-push) writes, runs a command, and its
    force-push is refused with the rule's reason."""
    implementer = [
        call("execute_command", command="git push --force origin main"),
        call("execute_command", command="echo built > out.txt"),
        call("write_file", path="SUMMARY.md", content="a summary"),
        answer("SUMMARY.md written"),
    ]
    document = scripted(
        {
            "researcher": [answer("the layout"), vote("agent2", "ok")],
            "implementer": [*implementer, vote("agent2", "mine")],
        },
        backends={
            "researcher": {
                "cwd": "workspace_researcher",
                "enable_mcp_command_line": True,
                "permissions": {"enabled": True, "role": "read-only"},
            },
            "implementer": {
                "cwd": "workspace_implementer",
                "enable_mcp_command_line": True,
                "permissions": {
                    "enabled": True,
                    "role": "read-write",
                    "rules": {"deny": ["command(git push --force*)"]},
                },
            },
        },
        orchestrator={"final_presentation": "reuse", "disable_injection": True},  # each finishes its work
    )
    result = massgen("--config", str(write_config(tmp_path, document)), "-q", "Summarize the repo")
    assert result.exit_code == 0, result.stderr
    calls = finished()
    assert [(name, ok) for name, ok, _ in calls] == [
        ("execute_command", False),
        ("execute_command", True),
        ("write_file", True),
    ]
    assert "refused by the permission rules (command(git push --force origin main) is denied)" in calls[0][2]
    assert (tmp_path / "workspace_implementer" / "SUMMARY.md").read_text() == "a summary"
    requests = [
        json.loads(path.read_text())
        for path in (first_attempt_folder() / "requests").glob("researcher_*.json")
    ]
    tools = set(requests[0]["tools"])
    assert {"read_file", "list_directory", "search_files"} <= tools
    assert not tools & {"write_file", "edit_file", "execute_command"}


def engine(**settings: object) -> PermissionEngine:
    return PermissionEngine.of(PermissionsConfig.model_validate(settings))


def command(text: str) -> dict[str, object]:
    return {"command": text}


def test_the_engine_decides_as_massgen_with_no_one_to_ask():
    risk_based = engine()
    assert risk_based.refusal("execute_command", command("git status")) is None, "low risk runs"
    assert risk_based.refusal("execute_command", command("make build")) is None, "a medium ask runs"
    assert "high-risk" in (risk_based.refusal("execute_command", command("curl https://x.io")) or "")
    assert "high-risk" in (risk_based.refusal("mcp__web__fetch_page", {"url": "https://x.io"}) or "")
    assert risk_based.refusal("mcp__weather__get_forecast", {"city": "Oslo"}) is None
    assert risk_based.refusal("plan_tool_of_the_run", {}) is None, "the run's own tools are not judged"
    deny_all = engine(automation_default="deny-all")
    assert deny_all.refusal("execute_command", command("git status")) is None, "no ask: low risk"
    assert "no one is here to approve it (deny-all)" in (
        deny_all.refusal("execute_command", command("make")) or ""
    )
    allow_all = engine(automation_default="allow-all", rules={"allow": ["command(*)"]})
    assert allow_all.refusal("execute_command", command("curl https://x.io")) is None
    assert "recursive delete of '/' is never allowed" in (
        allow_all.refusal("execute_command", command("rm -rf /")) or ""
    ), "the catastrophic floor holds under allow-all and an allow rule"
    for root in ("rm -rf /*", "sudo rm -rf / --no-preserve-root", "rm -r -f /", "rm --recursive -f /"):
        assert "recursive delete of '/'" in (allow_all.refusal("execute_command", command(root)) or ""), root
    for scratch in ("rm -rf /tmp/scratch", "sudo rm -rf /var/tmp/build-42", "rm -rf ./build"):
        assert allow_all.refusal("execute_command", command(scratch)) is None, f"{scratch}: a folder, not '/'"
    rules = engine(rules={"deny": ["write_file(/etc/**)"], "ask": ["command(npm publish*)"]})
    assert "denied" in (rules.refusal("write_file", {"path": "/etc/hosts", "content": ""}) or "")
    assert rules.refusal("write_file", {"path": "notes.md", "content": ""}) is None
    assert "high-risk" in (rules.refusal("execute_command", command("npm publish")) or "")


def test_asks_let_run_in_a_row_are_capped():
    capped = engine(max_consecutive_auto=2)
    assert [capped.refusal("execute_command", command(f"make step{n}")) for n in range(2)] == [None, None]
    assert "2 calls in a row ran without approval, the most allowed" in (
        capped.refusal("execute_command", command("make again")) or ""
    )
    assert capped.refusal("read_file", {"path": "a.txt"}) is None, "a low-risk call is no ask"


def test_rules_are_checked_when_the_config_loads(tmp_path):
    bad = scripted({"a": ["hi"]}, backends={"a": {"permissions": {"rules": {"deny": ["shell(rm*)"]}}}})
    result = massgen("--validate", str(write_config(tmp_path, bad)))
    assert result.exit_code == 2
    assert "unknown action 'shell'" in result.stdout + result.stderr


@pytest.mark.parametrize("mode", ["plan", "acceptEdits"])
def test_claude_codes_plan_mode_offers_no_write_or_command_tool(mode):
    backend = BackendConfig(type="claude_code", permission_mode=mode)
    gate = ToolGate.of(backend)
    takes_away = {name for name in [*FILE_TOOLS, "execute_command"] if not gate.offers(name)}
    assert takes_away == ({"write_file", "edit_file", "execute_command"} if mode == "plan" else set())


def test_disallowed_tools_take_ours_and_claude_codes_names_and_refuse_bash_globs(in_process):
    runner = [
        call("execute_command", command="rm -f notes.md"),
        call("execute_command", command="echo kept"),
        answer("done"),
    ]
    backend = {
        "cwd": "ws",
        "enable_mcp_command_line": True,
        "enable_web_search": True,
        "disallowed_tools": ["Read", "Grep", "Bash(rm*)", "mcp__weather", "custom_tool__two", "WebFetch"],
    }
    run = in_process(scripted({"runner": runner}, backends={"runner": backend}))
    assert run.app.ask("Tidy up").final_answer == "done"
    assert offered(run, "runner") & FILE_TOOLS == {"list_directory", "write_file", "edit_file"}
    results = [m["content"] for m in run.requests("runner")[2].messages if m["role"] == "tool"]
    assert "command refused: `rm -f notes.md` matches the blocked pattern" in results[0]
    assert "kept" in results[1]
    gate = ToolGate.of(run.app.agents[0].config.backend)
    assert not gate.offers("mcp__weather__get_forecast") and gate.offers("mcp__other__get_forecast")
    assert not gate.offers("custom_tool__two")
    assert not BackendConfig(
        type="scripted", responses=["x"], disallowed_tools=["WebSearch"]
    ).enable_web_search


def test_what_the_settings_leave_undone_is_said(tmp_path):
    from massgen_cli.config import load_config

    document = scripted(
        {"a": ["hi"]},
        backends={
            "a": {
                "permission_mode": "plan",
                "disallowed_tools": ["Task", "Read", "WebFetch"],
                "exclude_file_operation_mcps": True,
                "cwd": "ws",
            }
        },
    )
    warnings = load_config(write_config(tmp_path, document)).warnings
    assert warnings == [
        "agents[0].backend.permission_mode: only agent programs (claude_code…) read it, as in MassGen; "
        "scripted ignores it",
        "agents[0].backend.disallowed_tools: Task, WebFetch: no such tool here; ignored",
        "agents[0].backend.exclude_file_operation_mcps: the agent is offered only write_file and edit_file "
        "and no command tool (enable_mcp_command_line), so it can read none of its files",
    ]

"""A command an agent runs (``execute_command``, in the sandbox; the calls of one reply run at once) is one
line on the console with how it ended, without the live view and on a real terminal's live view, never
with ``--quiet``; ``logs show`` and the report say it the same way, from the ``CommandRan`` event the run
log keeps. While it runs, its command line and its output's lines are shown as they come (bounded,
escape codes stripped, secrets redacted)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.in_process_cli import massgen
from tests.cli.test_terminal import ESCAPES, run_on_a_terminal
from tests.conftest import first_attempt_folder, write_config
from tests.scripted import scripted

COMMANDS = [
    {"tool": "execute_command", "args": {"command": "echo hello; exit 3"}},
    {"tool": "execute_command", "args": {"command": "rm -rf build"}},
    {"tool": "execute_command", "args": {"command": "sleep 30", "timeout_seconds": 1}},
]
RUNNER = scripted(
    {"runner": [{"calls": COMMANDS}, "Three commands ran."]},
    backends={
        "runner": {
            "cwd": "ws_runner",
            "enable_mcp_command_line": True,
            "command_line_blocked_commands": ["rm\\s+-rf"],
        }
    },
)
SAID = ["$ echo hello; exit 3 → exit 3", "$ rm -rf build → refused", "$ sleep 30 → timed out"]


def test_each_command_is_one_line_with_its_exit_status(tmp_path: Path):
    write_config(tmp_path, RUNNER)
    run = massgen("--config", "config.yaml", "Run the commands.")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Three commands ran.\n"
    lines = [line for line in run.stderr.splitlines() if line.startswith("[runner] $ ") and " → " in line]
    assert sorted(line.removeprefix("[runner] ").rsplit(" (", 1)[0] for line in lines) == sorted(SAID)
    assert "execute_command" not in run.stderr, "no second line for the same command"

    logged = [json.loads(line) for line in (first_attempt_folder() / "events.jsonl").read_text().splitlines()]
    ran = [event for event in logged if event["type"] == "CommandRan"]
    assert {(event["command"], event["end"], event["exit_code"]) for event in ran} == {
        ("echo hello; exit 3", "exited", 3),
        ("rm -rf build", "refused", None),
        ("sleep 30", "timed_out", None),
    }
    told = massgen("logs", "show").stdout
    assert all(f"runner: {said}" in told for said in SAID), told
    report = tmp_path / "report.html"
    assert massgen("logs", "report", "--out", str(report)).exit_code == 0
    page = report.read_text()
    assert all(said in page for said in SAID)

    quiet = massgen("--config", "config.yaml", "--quiet", "Run the commands.")
    assert quiet.exit_code == 0 and quiet.stdout == "Three commands ran.\n"
    assert "$ " not in quiet.stderr


def test_a_command_is_a_line_of_its_own_above_the_live_view(tmp_path: Path):
    config = write_config(tmp_path, RUNNER)
    text = ESCAPES.sub("", run_on_a_terminal(["--config", str(config), "Run the commands."])).replace(
        "\r", ""
    )
    assert "╭" in text, "the live view drew its panel"
    for said in SAID:
        assert f"[runner] {said} (" in text


SHOWN_COMMAND = "printf '\\033[31mred\\033[0m text\\n'; echo token sk-live-secret-123456; exit 4"
LONG_COMMAND = "for i in $(seq 1 30); do echo line $i; done"
LIVE = scripted(
    {
        "runner": [
            {"tool": "execute_command", "args": {"command": SHOWN_COMMAND}},
            {"tool": "execute_command", "args": {"command": LONG_COMMAND}},
            "Done.",
        ]
    },
    backends={"runner": {"cwd": "ws_runner", "enable_mcp_command_line": True}},
)


def _shown_while_running(stderr: str, command: str) -> list[str]:
    """The lines said between a command's start line and its end line."""
    said = [line for line in stderr.splitlines() if line.startswith("[runner] ")]
    started = said.index(f"[runner] $ {command} …")
    ended = next(
        i for i, line in enumerate(said) if i > started and line.startswith(f"[runner] $ {command} → ")
    )
    return [line.removeprefix("[runner] │ ") for line in said[started + 1 : ended]]


def test_a_running_commands_line_and_output_are_shown_as_they_come(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", "sk-live-secret-123456")
    write_config(tmp_path, LIVE)
    run = massgen("--config", "config.yaml", "Run it.")
    assert run.exit_code == 0, run.stderr
    redacted = SHOWN_COMMAND.replace("sk-live-secret-123456", "[REDACTED]")
    assert _shown_while_running(run.stderr, redacted) == ["red text", "token [REDACTED]"], (
        "escape codes stripped, secrets redacted"
    )
    assert "sk-live-secret" not in run.stderr
    long = _shown_while_running(run.stderr, LONG_COMMAND)
    assert 2 <= len(long) <= 21 and long[-1].startswith("… (the rest"), "bounded: the result has the rest"
    assert all(line.startswith(("line ", "[… ")) for line in long[:-1]), long
    logged = (first_attempt_folder() / "events.jsonl").read_text()
    assert "CommandOutput" not in logged, "live lines are for the views; the result keeps the output"

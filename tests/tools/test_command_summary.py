"""What a run's events say of a tool result (``ToolFinished.summary``): a command's exit code and first
lines of output, other results on one line, in a real scripted run with real commands and files."""

from __future__ import annotations

import json
from typing import Any

from massgen_cli.tools.commands import command_summary
from tests.scripted import scripted

COMMAND = "printf 'line one\\n\\nline two\\n'; seq 3 9; echo oops >&2; exit 3"


def finished(run) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The ``ToolFinished`` events of the run's first attempt, in the order the calls started (the calls
    of one reply run at once, so they may finish in any order)."""
    path = run.app.run_log.directory / "turn_1" / "attempt_1" / "events.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    ended = {event["call_id"]: event for event in events if event["type"] == "ToolFinished"}
    return [ended[event["call_id"]] for event in events if event["type"] == "ToolStarted"]


def test_a_commands_summary_keeps_its_exit_code_and_first_lines_and_other_tools_keep_one_line(
    tmp_path, in_process
):
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "notes.md").write_text("first note\nsecond note\n")
    calls = [
        {"tool": "execute_command", "args": {"command": COMMAND}},
        {"tool": "execute_command", "args": {"command": "echo ok"}},
        {"tool": "read_file", "args": {"path": "notes.md"}},
        {"tool": "execute_command", "args": {"command": "rm -r notes.md"}},
    ]
    run = in_process(
        scripted(
            {"solo": [{"calls": calls}, "Done."]},
            backends={
                "solo": {
                    "cwd": "workspace",
                    "enable_mcp_command_line": True,
                    "command_line_blocked_commands": ["rm\\s"],
                }
            },
        )
    )
    assert run.app.ask("Run them.").final_answer == "Done."
    long, short, read, refused = finished(run)
    result = next(m for m in run.requests("solo")[1].messages if m.get("tool_call_id") == long["call_id"])
    assert result["content"].splitlines()[:3] == ["exit code: 3", "line one", ""], "the model reads it all"
    assert long["summary"].splitlines() == [
        "exit code: 3",
        "line one",
        "line two",
        "3",
        "4",
        "5",
        "[5 more lines]",
    ]
    assert long["chars"] == len(result["content"]) and long["ok"]
    assert short["summary"] == "exit code: 0\nok"
    assert read["ok"] and "\n" not in read["summary"] and "first note 2 second note" in read["summary"]
    assert not refused["ok"] and refused["summary"].startswith("Error: command refused: `rm -r notes.md`")


def test_a_long_command_output_is_summarised_within_400_characters():
    summary = command_summary("exit code: 0\n" + "y" * 1000 + "\nsecond\n")
    assert len(summary) == 400 and summary.startswith("exit code: 0\nyyy") and summary.endswith("…")
    lines = "\n".join(f"line {n}" for n in range(1, 200))
    assert command_summary(f"exit code: 1\n{lines}").splitlines()[-2:] == ["line 5", "[194 more lines]"]
    assert command_summary("exit code: 0\n") == "exit code: 0"

"""``massgen logs show|list|report`` on logs anything with the state folder's access may have written:
each ``summary.json`` field of every wrong JSON type, and an ``events.jsonl`` line holding a lone
surrogate, are shown or skipped; no command fails on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.runlogs.reader import all_runs
from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config
from tests.scripted import answer, scripted, vote

TWO_AGENTS = scripted(
    {
        "writer": [
            {"calls": [{"tool": "write_file", "args": {"path": "draft.md", "content": "draft\n"}}]},
            answer("A draft is in draft.md."),
            vote("agent1", "the draft is complete"),
        ],
        "reviewer": [answer("Mine.", delay=0.3), vote("agent1", "the draft covers it")],
    },
    backends={"writer": {"cwd": "ws_writer"}},
    orchestrator={"final_presentation": "reuse"},
)
WRONG_VALUES: dict[str, Any] = {
    "string": "x",
    "number": 7,
    "list": [1, "a", None],
    "dict": {"a": 1, "b": [2]},
    "null": None,
    "bool": True,
}
SUMMARY_FIELDS = [
    "session_id",
    "turn",
    "attempt",
    "question",
    "answers",
    "votes",
    "winner",
    "final_answer",
    "end_reason",
    "usage",
    "timings_s",
    "memory_errors",
    "tool_calls",
    "output_folder",
    "agent_status",
    "warnings",
    "total_usage",
    "turn_usage",
]


@pytest.fixture
def logged(tmp_path: Path) -> Path:
    """The attempt folder of a real run of two agents (a tool call, a restart, votes)."""
    config = write_config(tmp_path, TWO_AGENTS)
    ran = massgen("--config", str(config), "Write a draft.")
    assert ran.exit_code == 0, ran.stderr
    return all_runs(state_folder())[0].folder / "turn_1" / "attempt_1"


def read_back(tmp_path: Path) -> list[str]:
    """What ``logs show``, ``logs list`` and ``logs report`` print, each having exited 0."""
    said = []
    for args in (("logs", "show"), ("logs", "list"), ("logs", "list", "--json")):
        result = massgen(*args)
        assert result.exit_code == 0, (args, result.stderr, result.exception)
        said.append(result.stdout)
    report = massgen("logs", "report", "--out", str(tmp_path / "report.html"))
    assert report.exit_code == 0, (report.stderr, report.exception)
    said.append((tmp_path / "report.html").read_text(encoding="utf-8"))
    return said


def test_every_summary_field_of_a_wrong_type_is_shown_or_skipped(tmp_path: Path, logged: Path):
    path = logged / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    assert set(SUMMARY_FIELDS) <= set(summary), "the fuzzed fields are the ones a run writes"
    failed = []
    for field in SUMMARY_FIELDS:
        for kind, value in WRONG_VALUES.items():
            if type(value) is type(summary[field]) or (value is None and summary[field] is None):
                continue
            path.write_text(json.dumps({**summary, field: value}), encoding="utf-8")
            try:
                read_back(tmp_path)
            except AssertionError as error:
                failed.append(f"{field} as {kind}: {error}")
    path.write_text(json.dumps(summary), encoding="utf-8")
    assert not failed, "\n".join(failed)
    assert "A draft is in draft.md." in read_back(tmp_path)[0]


def test_a_lone_surrogate_in_an_events_line_is_shown_replaced(tmp_path: Path, logged: Path):
    events = logged / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    vote_line = next(json.loads(line) for line in lines if '"VoteCast"' in line)
    hostile = json.dumps({**vote_line, "voter": "\ud800", "reason": "odd \udfff end"})
    assert "\\ud800" in hostile
    events.write_text("\n".join([*lines, hostile]) + "\n", encoding="utf-8")
    (logged / "summary.json").write_text(
        json.dumps({**json.loads((logged / "summary.json").read_text()), "winner": "\udc80"}),
        encoding="utf-8",
    )
    shown, *_ = read_back(tmp_path)
    assert "\ufffd: vote → writer: odd \ufffd end" in shown


def test_a_field_of_text_shows_its_value_and_others_are_left_out():
    from massgen_cli.runlogs.shapes import summary

    read = summary(
        {
            "question": 7,
            "turn": "1",
            "winner": None,
            "votes": [{"voter": "a", "target": 1, "reason": None, "extra": 2}, 5],
            "usage": {"a": {"input_tokens": 3, "output_tokens": "4"}, "b": []},
            "later_field": {"kept": True},
        }
    )
    assert read == {
        "later_field": {"kept": True},
        "question": "7",
        "winner": None,
        "votes": [{"voter": "a", "target": "1"}],
        "usage": {"a": {"input_tokens": 3}},
    }

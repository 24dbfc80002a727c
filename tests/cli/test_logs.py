"""``massgen logs list|show|path``, the line each run ends with, and the session record's log folders, on
real scripted runs (in the test's process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from massgen_cli.runlogs.reader import all_runs
from massgen_cli.runlogs.report import report_html
from tests.cli.in_process_cli import massgen
from tests.cli.report_scenario import QUESTIONS, TURN_ONE_WINNER_TEXT, session_config
from tests.conftest import state_folder, write_config
from tests.scripted import answer, scripted, vote

TOOLS_AND_A_RESTART = scripted(
    {
        "writer": [
            {"calls": [{"tool": "write_file", "args": {"path": "draft.md", "content": "draft\n"}}]},
            answer("A draft is in draft.md."),
            vote("agent1", "the draft is complete"),
        ],
        "reviewer": [
            answer("Too early to say.", delay=2.0),  # cut off by the writer's answer
            vote("agent1", "the draft covers it"),
        ],
    },
    backends={"writer": {"cwd": "ws_writer"}},
    orchestrator={"final_presentation": "reuse"},
)
FAILING = "agent:\n  id: solo\n  backend: {type: scripted, responses: [{error: 500}], max_retries: 0}\n"


def ask(tmp_path: Path, question: str, *options: str, config: str = TOOLS_AND_A_RESTART):  # type: ignore[no-untyped-def]
    path = write_config(tmp_path, config, name=f"c{abs(hash(config))}.yaml")
    return massgen("--config", str(path), *options, question)


def newest_run() -> Path:
    return all_runs(state_folder())[0].folder


def test_a_run_ends_with_one_line_naming_its_log_folder(tmp_path):
    result = ask(tmp_path, "Write a draft.")
    assert result.exit_code == 0, result.stderr
    folder = newest_run()
    assert (folder / "turn_1" / "attempt_1" / "summary.json").is_file()
    assert result.stderr.splitlines()[-1] == f"log: {folder} (massgen logs report {folder.name})"


def test_a_quiet_run_writes_its_log_but_says_nothing_of_it(tmp_path):
    result = ask(tmp_path, "Write a draft.", "--quiet")
    assert result.exit_code == 0, result.stderr
    assert (newest_run() / "turn_1" / "attempt_1" / "events.jsonl").is_file()
    assert "log:" not in result.stderr


def test_logs_list_shows_each_run_newest_first_with_its_status_winner_and_cost(tmp_path):
    assert ask(tmp_path, "Write a draft.\nIn markdown.").exit_code == 0
    assert ask(tmp_path, "Fail, please.", config=FAILING).exit_code == 1
    listing = massgen("logs", "list")
    assert listing.exit_code == 0, listing.stderr
    failed, answered = listing.stdout.splitlines()
    assert failed.startswith(newest_run().name) and "failed" in failed and "Fail, please." in failed
    assert answered.split()[2:5] == ["1", "turn", "answered"]
    assert "writer" in answered and "free" in answered and answered.endswith("Write a draft.")
    records = [json.loads(line) for line in massgen("logs", "list", "--json").stdout.splitlines()]
    assert [r["status"] for r in records] == ["failed", "answered"]
    assert records[1]["winner"] == "writer" and records[1]["turns"] == [1]
    assert records[1]["usage"]["cost_usd"] == 0 and Path(records[1]["path"]).is_dir()


def test_logs_show_tells_answers_votes_restarts_tools_and_what_each_agent_spent(tmp_path):
    assert ask(tmp_path, "Write a draft.").exit_code == 0
    shown = massgen("logs", "show")
    assert shown.exit_code == 0, shown.stderr
    text = shown.stdout
    assert f"Run {newest_run().name}" in text and "Turn 1 · attempt 1 · answered" in text
    assert "writer won with 2 of 2 votes" in text
    assert "writer: new answer: A draft is in draft.md." in text
    assert "reviewer: vote → writer: the draft covers it" in text
    assert "reviewer: restarted by writer's new answer" in text
    assert "writer: write_file ✓ wrote 6 characters" in text
    assert "writer: 3 step(s) · " in text and " · free · " in text and "1 tool call(s)" in text


def test_logs_show_lists_the_memories_a_turn_retrieved_with_their_source(tmp_path):
    result = massgen("--config", str(session_config(tmp_path)), stdin="\n".join(QUESTIONS) + "\n")
    assert result.exit_code == 0, result.stderr
    text = massgen("logs", "show").stdout
    turn_two = text[text.index("Turn 2 · attempt 1") :]
    assert "critic: memory: " in turn_two and "retrieved (turn_start)" in turn_two
    memories = [line.strip() for line in turn_two.splitlines() if "· by analyst, turn 1, session " in line]
    assert any(line.endswith(f": {TURN_ONE_WINNER_TEXT}") for line in memories), (
        "the winner's memory, attributed"
    )
    assert "recorded" in text


def test_logs_path_finds_the_latest_run_a_named_run_and_every_run_of_a_session(tmp_path):
    for question in ("First.", "Second."):
        assert ask(tmp_path, question, "--session", "drafts").exit_code == 0
    older, newer = sorted(run.folder for run in all_runs(state_folder()))
    assert massgen("logs", "path").stdout == f"{newer}\n"
    assert massgen("logs", "path", older.name).stdout == f"{older}\n"
    assert massgen("logs", "path", str(older / "turn_1")).stdout == f"{older}\n"
    assert massgen("logs", "path", "drafts").stdout == f"{older}\n{newer}\n"
    missing = massgen("logs", "path", "nothing_here")
    assert missing.exit_code == 2 and "`massgen logs list` shows both" in missing.stderr


def test_logs_commands_say_when_there_is_no_run_yet():
    assert massgen("logs", "list").stderr.startswith("no run logs under ")
    empty = massgen("logs", "show")
    assert empty.exit_code == 2 and "ask a question first" in empty.stderr


def test_the_session_record_lists_its_runs_log_folders_and_older_records_still_load(tmp_path):
    session = state_folder() / "sessions" / "drafts" / "session.json"
    session.parent.mkdir(parents=True)
    older_record = {
        "session_id": "drafts",
        "created_at": "2026-01-01T00:00:00",
        "updated_at": "2026-01-01T00:00:00",
    }
    session.write_text(json.dumps(older_record))  # as written before the record listed log folders
    for question in ("First.", "Second."):
        assert ask(tmp_path, question, "--session", "drafts").exit_code == 0
    record = json.loads(session.read_text())
    assert record["log_folders"] == sorted(run.name for run in all_runs(state_folder()))
    assert record["turns_completed"] == 2


def test_logs_show_and_list_print_no_control_characters_a_log_holds(tmp_path):
    hostile = "Four.\x1b]0;pwned\x07\x1b[2J\x9b31m"
    config = scripted({"solo": [hostile]})
    assert ask(tmp_path, "What is 2+2?\x1b[1A", config=config).exit_code == 0
    summary = json.loads((newest_run() / "turn_1" / "attempt_1" / "summary.json").read_text())
    assert summary["final_answer"] == hostile  # the log keeps the answer as it came
    for args in (("logs", "show"), ("logs", "list")):
        shown = massgen(*args)
        assert shown.exit_code == 0, shown.stderr
        assert "What is 2+2?" in shown.stdout, args
        assert not {"\x1b", "\x07", "\x9b"} & set(shown.stdout), args
    assert "Four.]0;pwned[2J31m" in massgen("logs", "show").stdout


def events_file() -> Path:
    return newest_run() / "turn_1" / "attempt_1" / "events.jsonl"


def older_form(line: dict) -> dict:
    """A line as logs were written before votes had an event of their own."""
    if line["type"] != "VoteCast":
        return line
    context = {key: value for key, value in line.items() if key not in ("type", "voter", "target", "reason")}
    detail = f"{line['target']}: {line['reason']}"
    return {**context, "type": "AgentStatus", "agent_id": line["voter"], "status": "voted", "detail": detail}


def test_a_vote_reaches_logs_show_and_the_report_from_its_vote_cast_event(tmp_path):
    assert ask(tmp_path, "Write a draft.").exit_code == 0
    lines = [json.loads(line) for line in events_file().read_text().splitlines()]
    votes = [(line["voter"], line["target"], line["reason"]) for line in lines if line["type"] == "VoteCast"]
    assert ("reviewer", "writer", "the draft covers it") in votes
    assert not [line for line in lines if line.get("status") == "voted"], "no status carries the vote"
    assert "reviewer: vote → writer: the draft covers it" in massgen("logs", "show").stdout
    page = report_html(all_runs(state_folder()), "drafts")
    assert "voted for writer: the draft covers it" in page and "→ writer</text>" in page


def test_a_vote_logged_as_a_voted_agent_status_by_an_older_version_still_reads_as_a_vote(tmp_path):
    assert ask(tmp_path, "Write a draft.").exit_code == 0
    now = massgen("logs", "show").stdout
    path = events_file()
    older = [older_form(json.loads(line)) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(line) + "\n" for line in older))
    assert '"VoteCast"' not in path.read_text() and '"status": "voted"' in path.read_text()
    assert massgen("logs", "show").stdout == now
    assert "reviewer: vote → writer: the draft covers it" in now
    assert "voted for writer: the draft covers it" in report_html(all_runs(state_folder()), "drafts")


def test_a_damaged_line_or_an_unknown_event_is_left_out_said_and_the_rest_is_read(tmp_path):
    assert ask(tmp_path, "Write a draft.").exit_code == 0
    before = massgen("logs", "show").stdout
    path = events_file()
    first, *rest = path.read_text().splitlines()
    vote_line = next(json.loads(line) for line in rest if '"VoteCast"' in line)
    damaged = [
        json.dumps({"type": "AgentMood", "agent_id": "writer", "mood": "proud"}),
        json.dumps({**vote_line, "target": 7}),
        "[1, 2]",
    ]
    path.write_text(
        "\n".join([first, *damaged, *rest, first[: len(first) // 2]])
    )  # a killed writer's half line
    shown = massgen("logs", "show")
    assert shown.exit_code == 0, shown.stderr
    said = "log: 4 line(s) of events.jsonl left out (damaged, or an event this version does not know)"
    assert [line for line in shown.stdout.splitlines() if line.strip() != said] == before.splitlines()
    assert said in shown.stdout
    page = report_html(all_runs(state_folder()), "drafts")
    assert said in page and "voted for writer: the draft covers it" in page


def open_report(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``massgen logs report --open`` where the only programs are Python's own and the environment names
    no display: no web browser, unless ``BROWSER`` names one."""
    shown = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    shown["PATH"] = str(Path(sys.executable).parent)
    return subprocess.run(
        [sys.executable, "-m", "massgen_cli", "logs", "report", "--open"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**shown, **env},
        cwd=tmp_path,
        check=False,
    )


def test_report_open_says_when_no_browser_can_open_it_and_opens_it_in_one_that_can(tmp_path):
    assert ask(tmp_path, "Write a draft.").exit_code == 0
    page = newest_run() / "report.html"
    alone = open_report(tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout == f"{page}\n"
    assert alone.stderr == f"no web browser found to open it; open {page} in one\n"
    recorder = f"{sys.executable} -c \"import sys; open('opened', 'w').write(sys.argv[1])\" %s"
    opened = open_report(tmp_path, BROWSER=recorder)
    assert opened.returncode == 0 and opened.stderr == "", opened.stderr
    assert (tmp_path / "opened").read_text() == page.as_uri()

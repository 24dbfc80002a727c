"""``massgen logs report``: one self-contained HTML page, checked in a real headless Chromium with the
network off: every agent's lane, each vote, the memory a click shows, no script error, one screen per
turn. ``MASSGEN_REPORT_SCREENSHOT=FILE`` also keeps the screenshot there (how docs/report.png is made)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from massgen_cli.runlogs.reader import all_runs
from massgen_cli.runlogs.report import report_html
from tests.cli.headless import SCREEN, Browser, chromium_or_fail
from tests.cli.in_process_cli import massgen
from tests.cli.report_scenario import HOSTILE, QUESTIONS, TURN_ONE_WINNER_TEXT, session_config
from tests.conftest import state_folder

AGENTS = ["analyst", "critic", "scout"]
COMPRESSED = (
    "📦 [critic] Context compressed: Removed 4 messages (812 tokens). Kept 3 recent messages (400 tokens)."
)


def run_session(tmp_path: Path) -> Path:
    """The scenario's two turns in one run; its log folder."""
    result = massgen("--config", str(session_config(tmp_path)), stdin="\n".join(QUESTIONS) + "\n")
    assert result.exit_code == 0, result.stderr
    (run,) = all_runs(state_folder())
    return run.folder


def summaries(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("turn_*/attempt_*/summary.json"))]


def test_the_report_in_a_real_browser_shows_lanes_votes_memory_and_no_script_error(tmp_path, request):
    chromium_or_fail()  # before the run: a missing browser is said at once
    folder = run_session(tmp_path)
    result = massgen("logs", "report")
    assert result.exit_code == 0, result.stderr
    page = Path(result.stdout.strip())
    assert page == folder / "report.html"
    browser = Browser(tmp_path / "browser")
    try:
        browser.load(page)
        lanes = browser.evaluate(
            "[...document.querySelectorAll('svg.timeline')].map(svg => "
            "[...svg.querySelectorAll('g.lane')].map(lane => lane.dataset.agent))"
        )
        assert lanes == [AGENTS, AGENTS], "one timeline per turn, one lane per agent"
        votes = browser.evaluate(
            "[...document.querySelectorAll('g.mark.vote > title')].map(t => t.textContent)"
        )
        for summary in summaries(folder):
            for vote in summary["votes"]:
                assert any(f"vote → {vote['target']}: {vote['reason']}" in title for title in votes), vote
        assert browser.evaluate("document.querySelectorAll('g.step.cut').length") >= 2, "streams cut off"
        restarts = browser.evaluate(
            "[...document.querySelectorAll('g.mark.restart > title')].map(t => t.textContent)"
        )
        assert any("by analyst's new answer" in title for title in restarts)
        assert browser.evaluate("document.querySelectorAll('g.mark.tool').length") == 1
        assert browser.evaluate("document.querySelectorAll('g.mark.final').length") == 2

        recall = "#turn-2-attempt-1 g.lane[data-agent='critic'] g.mark.recall"
        browser.click(recall)
        shown = browser.wait_for(
            "[...document.querySelectorAll('#detail dt')].filter(dt => dt.textContent.includes('by analyst, "
            "turn 1')).map(dt => dt.nextElementSibling.textContent)"
        )
        assert TURN_ONE_WINNER_TEXT in shown, "the winner's memory, its text under whose it is and its turn"
        assert "turn_start" in browser.evaluate("document.getElementById('detail').textContent")

        said = browser.evaluate("document.querySelector('#turn-1-attempt-1 details.said').textContent")
        assert HOSTILE in said, "hostile answer text is shown as text"
        assert browser.evaluate("document.scripts.length") == 2, "no script came in with the logs"
        assert not any(e.get("method") == "Page.javascriptDialogOpening" for e in browser.events)
        height = browser.evaluate(
            "document.querySelector('#turn-1-attempt-1').getBoundingClientRect().height"
        )
        assert height <= SCREEN[1], "a turn of three agents fits one laptop screen"
        shot = tmp_path / "report.png"
        browser.screenshot(shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert browser.page("Page.printToPDF")["data"], "it prints"
        assert browser.requested_urls() == [page.resolve().as_uri()], "nothing but the file itself is loaded"
        assert browser.evaluate("document.getElementById('report-errors').textContent") == ""
        assert browser.errors() == []
    finally:
        browser.close()
    if os.environ.get("MASSGEN_REPORT_SCREENSHOT"):  # relative to where pytest was started
        shutil.copyfile(shot, request.config.invocation_params.dir / os.environ["MASSGEN_REPORT_SCREENSHOT"])


def test_a_log_without_memory_events_or_request_times_still_makes_a_report(tmp_path):
    folder = run_session(tmp_path)
    compressed = {"time": "", "type": "Notice", "level": "info", "message": COMPRESSED}
    for events in folder.glob("turn_*/attempt_*/events.jsonl"):
        lines = [line for line in events.read_text().splitlines() if '"type": "Memory' not in line]
        compressed["time"] = json.loads(lines[-1])["time"]
        events.write_text("\n".join([*lines, json.dumps(compressed)]) + "\n")
    for request in folder.glob("turn_*/attempt_*/requests/*.json"):
        data = json.loads(request.read_text())
        assert data.pop("time")
        request.write_text(json.dumps(data))
    (run,) = all_runs(state_folder())
    page = report_html([run], run.name)
    assert page.count('class="lane"') == 6 and 'class="item mark recall"' not in page
    assert page.count('class="item mark compression"') == 2 and "Removed 4 messages" in page
    assert page.count("<script>") == 2 and HOSTILE not in page


def test_a_session_report_spans_its_runs(tmp_path):
    config = str(session_config(tmp_path))
    for question in QUESTIONS:
        assert massgen("--config", config, "--session", "vault", question).exit_code == 0
    result = massgen("logs", "report", "vault")
    assert result.exit_code == 0, result.stderr
    page = Path(result.stdout.strip())
    assert page.name == "report_vault.html" and page.parent == state_folder() / "massgen_logs"
    html = page.read_text()
    assert [run.name in html for run in all_runs(state_folder())] == [True, True]
    assert 'id="turn-1-attempt-1"' in html and 'id="turn-2-attempt-1"' in html

"""The live web view of `massgen serve`, in a real headless Chromium: a running turn's answers and votes
appear as they happen (with what long-term memory retrieves and records), a message typed on the page
reaches the agents' next step, the run ends on the page and joins the past runs; no secret reaches the
page; the page stops a run; `massgen --web` serves one run. ``MASSGEN_WEB_SCREENSHOT=FILE`` also keeps
the screenshot there (how docs/web_view.png is made)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from massgen_cli.inbox import STEERING_HEADER
from tests.cli.headless import Browser, chromium_or_fail
from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until
from tests.serve.serving import FUNCTIONS, ServedInThread, server_environment, write_configs

ANNOUNCED = re.compile(r"massgen --web: watch and steer the run at (http://127\.0\.0\.1:\d+/\?token=\S+)")

TOKEN = "web-view-test-token-0123456789"
SECRET = "codeword-notforthepage"
STEER = "Answer in one word, please."


def team(gate: Path, memory: bool = False) -> str:
    """alpha answers and votes at once; beta waits for ``gate`` in a tool call, then answers, which
    starts alpha again: alpha's third request is a step that begins after the gate opens."""
    wait = {"name": "wait_for_file", "function": "wait_for_file", "path": FUNCTIONS}
    alpha = [
        {"tool": "new_answer", "args": {"content": f"Alpha: Paris ({SECRET})."}},
        {"tool": "vote", "args": {"agent_id": "agent1", "reason": "the only answer so far"}},
        {"tool": "vote", "args": {"agent_id": "agent2", "reason": "beta did as the user asked"}},
    ]
    beta = [
        {"tool": "custom_tool__wait_for_file", "args": {"path": str(gate)}},
        {"tool": "new_answer", "args": {"content": "Paris."}},
        {"tool": "vote", "args": {"agent_id": "agent2", "reason": "one word"}},
        "Paris.",
    ]
    agents = [
        {"id": "alpha", "backend": {"type": "scripted", "responses": alpha}},
        {"id": "beta", "backend": {"type": "scripted", "responses": beta, "custom_tools": [wait]}},
    ]
    config = {"agents": agents, "orchestrator": {"peer_updates": "defer"}}
    if memory:  # long-term memory (the offline embedder): what the run records shows on the page too
        config["memory"] = {"enabled": True, "persistent_memory": {"enabled": True}}
    return json.dumps(config)


def requests_of(state: Path, agent: str) -> list[str]:
    """The requests ``agent`` was sent in turn 1, as far as they are whole (a file being written is not)."""
    paths = sorted(state.glob(f"massgen_logs/*/turn_1/attempt_1/requests/{agent}_*"))
    whole = []
    for path in paths:
        text = path.read_text()
        if not _is_json(text):
            break
        whole.append(text)
    return whole


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def ask(root: str, answers: list[dict]) -> None:
    """The question, by the API (the run the page watches); its answer kept in ``answers``."""
    body = {"model": "massgen", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    headers = {"authorization": f"Bearer {TOKEN}"}
    answers.append(httpx.post(f"{root}/v1/chat/completions", json=body, headers=headers, timeout=120).json())


def text_of(browser: Browser, selector: str) -> str:
    return str(browser.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})]"
                                ".map(e => e.textContent).join('\\n')"))  # fmt: skip


def test_the_live_view_shows_a_run_as_it_goes_and_steers_it(tmp_path: Path, monkeypatch):
    chromium_or_fail()
    monkeypatch.setenv("WEB_VIEW_TEST_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # the gate's path, as the page shows it, is relative
    state, gate = Path(os.environ["MASSGEN_HOME"]), Path("gate")
    server = ServedInThread(state, write_configs(tmp_path, {"team": team(gate, memory=True)}), token=TOKEN)
    assert httpx.get(f"{server.root}/runs", timeout=10).status_code == 401, "the page's data needs the token"
    answers: list[dict] = []
    asking = threading.Thread(target=ask, args=(server.root, answers))
    browser = Browser(tmp_path / "browser")
    try:
        asking.start()
        browser.visit(f"{server.root}/?token={TOKEN}")
        assert browser.evaluate("location.search") == "", "the token left the address for a cookie"
        browser.wait_for("!!document.querySelector('#timeline li.vote')")
        assert "alpha answered: Alpha: Paris ([REDACTED])." in text_of(browser, "#timeline li.answer")
        assert "alpha voted for alpha" in text_of(browser, "#timeline li.vote")
        assert text_of(browser, "#run-status") == "running" and not gate.exists()

        browser.evaluate(f"document.getElementById('steer-text').value = {json.dumps(STEER)}")
        browser.click("#steer-send")
        browser.wait_for("document.getElementById('steer-said').textContent.startsWith('sent')")
        steered = json.dumps(f"you said: {STEER}")
        lines = "[...document.querySelectorAll('#timeline li.steer')]"
        browser.wait_for(f"{lines}.some(e => e.textContent.includes({steered}))")  # once the event is back
        shot = tmp_path / "web_view.png"
        browser.screenshot(shot)
        assert all(STEERING_HEADER not in sent for sent in requests_of(state, "alpha")), "not sent before"

        gate.write_text("open")
        wait_until(lambda: len(requests_of(state, "alpha")) >= 3, within_s=60)
        assert f"{STEERING_HEADER} {STEER}" in requests_of(state, "alpha")[2], "alpha's next step has it"
        browser.wait_for("document.getElementById('run-status').textContent === 'answered'")
        assert text_of(browser, "#final-text") == "Paris."
        assert "winner: beta" in text_of(browser, "#run-verdict")
        assert "alpha memory retrieved (after_restart)" in text_of(browser, "#timeline li.recall")
        browser.wait_for("!!document.querySelector('#timeline li.record')")  # recorded as the turn commits
        presented = requests_of(state, "beta")[-1]
        assert '"final_answer"' in presented and f"{STEERING_HEADER} {STEER}" in presented, "the winner's too"
        link = browser.wait_for("document.querySelector('#past-runs a')?.getAttribute('href')")
        cookie = f"massgen_token_{server.root.rsplit(':', 1)[1]}"
        report = httpx.get(f"{server.root}{link}", cookies={cookie: TOKEN}, timeout=30)
        assert report.status_code == 200 and "Final answer · beta" in report.text, "its report"
        assert SECRET not in report.text
        page_text = browser.evaluate("document.body.innerText")
        assert SECRET not in page_text
        assert browser.errors() == []
        assert all(url.startswith(f"{server.root}/") for url in browser.requested_urls()), "nothing else"
        if target := os.environ.get("MASSGEN_WEB_SCREENSHOT"):
            shutil.copyfile(shot, target)
    finally:
        gate.write_text("open")
        browser.close()
        asking.join(timeout=120)
        server.stop()
    assert answers and answers[0]["choices"][0]["message"]["content"] == "Paris."


def test_the_page_stops_a_run_and_refuses_an_empty_message(tmp_path: Path):
    chromium_or_fail()
    state, gate = Path(os.environ["MASSGEN_HOME"]), tmp_path / "gate"
    server = ServedInThread(state, write_configs(tmp_path, {"team": team(gate)}))
    answers: list[dict] = []
    asking = threading.Thread(target=ask, args=(server.root, answers))
    browser = Browser(tmp_path / "browser")
    try:
        asking.start()
        browser.visit(f"{server.root}/")
        run_id = browser.wait_for("document.getElementById('run').dataset.run")
        refused = httpx.post(f"{server.root}/runs/{run_id}/steer", json={"message": "  "}, timeout=10)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_message"
        form = httpx.post(f"{server.root}/runs/{run_id}/stop", data={"a": "b"}, timeout=10)
        assert form.status_code == 415, "what another site's page could send unasked is refused"
        browser.wait_for("!!document.querySelector('#timeline li.vote')")
        browser.click("#stop")
        browser.wait_for("document.getElementById('run-status').textContent === 'cancelled'")
        assert "the run cancelled" in text_of(browser, "#timeline li.end")
        assert browser.errors() == []
    finally:
        gate.write_text("open")
        browser.close()
        asking.join(timeout=120)
        server.stop()
    assert answers[0]["error"]["code"] == "cancelled", "its client hears it was cancelled"
    summaries = [json.loads(path.read_text()) for path in state.glob("massgen_logs/*/turn_1/*/summary.json")]
    assert [summary["end_reason"].split()[0] for summary in summaries] == ["cancelled"]


def test_massgen_web_serves_one_run_to_watch_and_steer_and_prints_its_answer(tmp_path: Path):
    chromium_or_fail()
    gate = tmp_path / "gate"
    (config,) = write_configs(tmp_path, {"team": team(gate)})
    stderr_path, stdout_path = tmp_path / "web.stderr", tmp_path / "web.stdout"
    question = "What is the capital of France?"
    with stderr_path.open("w") as stderr, stdout_path.open("w") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "massgen_cli", "--web", "-c", str(config), question],
            cwd=tmp_path, env=server_environment(tmp_path, {}), stdout=stdout, stderr=stderr,
        )  # fmt: skip
    browser = Browser(tmp_path / "browser")
    try:
        wait_until(lambda: ANNOUNCED.search(stderr_path.read_text()) or process.poll() is not None, 120)
        found = ANNOUNCED.search(stderr_path.read_text())
        assert found, stderr_path.read_text()
        browser.visit(found.group(1))
        browser.wait_for("!!document.querySelector('#timeline li.vote')")
        assert browser.evaluate("document.getElementById('ask').hidden"), "it serves its one run"
        root, token = found.group(1).split("/?token=")
        asked = httpx.post(f"{root}/runs", json={"model": "massgen", "question": "More?"},
                           headers={"authorization": f"Bearer {token}"}, timeout=10)  # fmt: skip
        assert asked.status_code == 403 and asked.json()["error"]["code"] == "questions_not_taken"
        browser.evaluate(f"document.getElementById('steer-text').value = {json.dumps(STEER)}")
        browser.click("#steer-send")
        browser.wait_for("document.getElementById('steer-said').textContent.startsWith('sent')")
        assert browser.errors() == []  # before the run ends: then the server stops, and the page says so
        gate.write_text("open")
        assert process.wait(timeout=120) == 0, stderr_path.read_text()
    finally:
        gate.write_text("open")
        browser.close()
        if process.poll() is None:
            process.kill()
    assert stdout_path.read_text() == "Paris.\n", "the answer on stdout, as without the view"
    said = stderr_path.read_text()
    assert "Turn 1 ended: " in said and "\nlog: " in said, "the run's end said as without the view"
    assert "[alpha] answered: " in said, "and its progress"
    assert f"{STEERING_HEADER} {STEER}" in requests_of(tmp_path / "state", "alpha")[2]


def test_massgen_web_needs_a_question():
    no_question = massgen("--web")
    assert no_question.exit_code == 2 and "--web runs one question" in no_question.stderr


def test_a_late_watcher_sees_when_each_event_happened_not_when_it_connected(tmp_path: Path):
    """Every event the page heard carried the time the page connected (all "42.4s"): each now says when
    it was said, in seconds since the run started, replayed ones too."""
    from tests.serve.test_security import GatedServer

    served = GatedServer(tmp_path)
    try:
        root, run = served.root, served.running
        first = _first_events(root, run, 2)  # the run has said these by now (it waits at its gate)
        connected = time.time() - _run_started(root, run)
        again = _first_events(root, run, 2)  # replayed to a later watcher: the same times
        times = [event["at"] for event in first]
        assert all(isinstance(at, float | int) and 0 <= at <= connected for at in times)
        assert times == sorted(times) and [event["at"] for event in again] == times
    finally:
        served.close()


def _first_events(root: str, run: str, count: int) -> list[dict]:  # type: ignore[type-arg]
    """The first ``count`` events a watcher connecting now is sent."""
    said: list[dict] = []  # type: ignore[type-arg]
    with httpx.stream("GET", f"{root}/runs/{run}/events", timeout=30) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                said.append(json.loads(line.removeprefix("data: ")))
            if len(said) == count:
                break
    return said


def _run_started(root: str, run: str) -> float:
    [entry] = [entry for entry in httpx.get(f"{root}/runs", timeout=10).json()["live"] if entry["id"] == run]
    return float(entry["started"])

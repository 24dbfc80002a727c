"""The live view as a page people keep open, in a real headless Chromium: the agents' and the run's
states follow the events (no agent left `working` once the run is over, a finished run leaves the
running list at once), what an agent streams shows as it comes and stays bounded, each event carries
when it happened, a finished run stays in the main area after a reload (its question, state, winner,
answer and a link to its report, which links back), and the question box starts a run on a served
config behind the same door and bounds as the API. Screenshots are kept beside the browser's profile."""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from pathlib import Path

import httpx

from massgen_cli.serve.wire import RequestLimits
from tests.cli.headless import Browser, chromium_or_fail
from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until
from tests.serve.serving import FUNCTIONS, ServedInThread, echo_agent, write_configs
from tests.serve.test_web import STEER, TOKEN, ask, text_of

LONG = " ".join(f"word{number}" for number in range(3000))
"""What beta streams before it waits: far more than an agent's stream box shows."""
STREAM_CHARS = 3000


def streaming_team(gate: Path) -> str:
    """alpha answers and votes at once; beta streams ``LONG`` and waits for ``gate`` in a tool call,
    then answers; alpha then votes for beta, which presents."""
    wait = {"name": "wait_for_file", "function": "wait_for_file", "path": FUNCTIONS}
    alpha = [
        {"tool": "new_answer", "args": {"content": "Alpha: Paris."}},
        {"tool": "vote", "args": {"agent_id": "agent1", "reason": "the only answer so far"}},
        {"tool": "vote", "args": {"agent_id": "agent2", "reason": "shorter"}},
    ]
    beta = [
        {"text": LONG, "tool": "custom_tool__wait_for_file", "args": {"path": str(gate)}},
        {"tool": "new_answer", "args": {"content": "Paris."}},
        {"tool": "vote", "args": {"agent_id": "agent2", "reason": "one word"}},
        "Paris.",
    ]
    agents = [
        {"id": "alpha", "backend": {"type": "scripted", "responses": alpha}},
        {"id": "beta", "backend": {"type": "scripted", "responses": beta, "custom_tools": [wait]}},
    ]
    return json.dumps({"agents": agents, "orchestrator": {"peer_updates": "defer"}})


def states(browser: Browser) -> dict[str, str]:
    return dict(browser.evaluate("Object.fromEntries([...document.querySelectorAll('#agents tr')]"
                                 ".map(row => [row.dataset.agent, row.dataset.state]))"))  # fmt: skip


def test_states_streams_and_times_follow_the_events_and_a_finished_run_stays(tmp_path: Path):
    chromium_or_fail()
    state, gate = Path(os.environ["MASSGEN_HOME"]), tmp_path / "gate"
    server = ServedInThread(state, write_configs(tmp_path, {"team": streaming_team(gate)}), token=TOKEN)
    answers: list[dict] = []  # type: ignore[type-arg]
    asking = threading.Thread(target=ask, args=(server.root, answers))
    browser = Browser(tmp_path / "browser", timeout_s=120)
    try:
        asking.start()
        browser.visit(f"{server.root}/?token={TOKEN}")
        browser.wait_for("document.querySelector('#agents tr[data-agent=alpha]')?.dataset.state === 'voted'")
        tail = LONG[-200:]
        beta_stream = "document.querySelector('.stream[data-agent=beta] pre').textContent"
        browser.wait_for(f"{beta_stream}.endsWith({tail!r})")
        streamed = text_of(browser, ".stream[data-agent=beta] pre")
        assert len(streamed) <= STREAM_CHARS and streamed.startswith("…"), "bounded: its last characters"
        assert states(browser) == {"alpha": "voted", "beta": "working"}, "beta is still in its step"
        assert text_of(browser, "#run-status") == "running"
        assert text_of(browser, "#live-runs li.live").endswith("What is the capital of France?")
        browser.evaluate(f"document.getElementById('steer-text').value = {json.dumps(STEER)}")
        browser.click("#steer-send")
        browser.wait_for("document.getElementById('steer-said').textContent.startsWith('sent')")
        browser.screenshot(tmp_path / "browser" / "running.png")

        gate.write_text("open")
        browser.wait_for("document.getElementById('run-status').textContent === 'answered'")
        browser.wait_for("document.getElementById('steer-send').disabled")  # the run said it ended
        assert browser.evaluate("document.querySelectorAll('#live-runs li.live').length") == 0, "left at once"
        assert states(browser) == {"alpha": "voted", "beta": "won"}, "no agent is still working"
        assert text_of(browser, "#final-text") == "Paris."
        times = [float(at.rstrip("s")) for at in text_of(browser, "#timeline .at").split("\n")]
        assert times == sorted(times) and times[-1] > times[0], "each line says when it happened"
        browser.screenshot(tmp_path / "browser" / "answered.png")

        browser.visit(f"{server.root}/")  # a reload: the run is over, the page's memory gone
        browser.wait_for("document.querySelectorAll('#finished li.finished-run').length === 1")
        kept = "#finished li.finished-run"
        assert browser.evaluate(f"document.querySelector({kept!r}).dataset.state") == "answered"
        assert text_of(browser, f"{kept} .question") == "What is the capital of France?"
        assert text_of(browser, f"{kept} .answer") == "Paris."
        assert text_of(browser, f"{kept} .winner") == " winner: beta"
        report = browser.evaluate(f"document.querySelector('{kept} a.report').getAttribute('href')")
        assert report.startswith("/runs/past/log_")
        browser.screenshot(tmp_path / "browser" / "reloaded.png")
        browser.click(f"{kept} .question")  # told again from its log
        browser.wait_for("document.getElementById('run-status').textContent === 'answered'")
        assert "beta answered: Paris." in text_of(browser, "#timeline li.answer")
        assert states(browser) == {"alpha": "voted", "beta": "won"}
        browser.click(f"{kept} a.report")
        browser.wait_for("document.title.startsWith('massgen report')")
        assert f"you said: {STEER}" in text_of(browser, "ul.steering"), "the report has the steering"
        browser.click("nav.back a")
        browser.wait_for("document.title === 'massgen · live'")
        browser.wait_for("document.querySelectorAll('#finished li.finished-run').length === 1")
        assert browser.errors() == []
    finally:
        gate.write_text("open")
        browser.close()
        asking.join(timeout=120)
        server.stop()
    assert answers[0]["choices"][0]["message"]["content"] == "Paris."
    [log] = state.glob("massgen_logs/*/turn_1/attempt_1/events.jsonl")
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [event["text"] for event in logged if event["type"] == "SteeringMessage"] == [STEER]
    shown = massgen("logs", "show", "--state-dir", str(state))
    assert shown.exit_code == 0 and f"you: {STEER}" in shown.stdout.split("sent during the run")[1]


def test_the_question_box_starts_a_run_on_a_served_config(tmp_path: Path):
    chromium_or_fail()
    state = Path(os.environ["MASSGEN_HOME"])
    configs = write_configs(tmp_path, {"team": streaming_team(tmp_path / "gate"), "echo": echo_agent()})
    server = ServedInThread(state, configs, token=TOKEN, limits=RequestLimits(max_chars=1000))
    browser = Browser(tmp_path / "browser", timeout_s=120)
    try:
        browser.visit(f"{server.root}/?token={TOKEN}")
        browser.wait_for("!document.getElementById('ask').hidden")
        models = browser.evaluate("[...document.querySelectorAll('#ask-model option')].map(o => o.value)")
        assert models == ["massgen", "massgen/team", "massgen/echo"]
        browser.evaluate("document.getElementById('ask-model').value = 'massgen/echo'")
        browser.evaluate("document.getElementById('ask-text').value = 'Repeat codeword-fromthebox'")
        browser.evaluate("document.getElementById('ask-session').value = 'boxed'")
        browser.click("#ask-send")
        browser.wait_for("document.getElementById('run-status').textContent === 'answered'")
        assert text_of(browser, "#final-text") == "You said codeword-fromthebox."
        assert text_of(browser, "#run-title") == "massgen/echo · session boxed"
        browser.wait_for("!!document.querySelector('#finished li.finished-run .answer')")
        assert text_of(browser, "#finished .answer") == "You said codeword-fromthebox."
        assert (state / "sessions" / "boxed" / "session.json").is_file(), "the run took its session"
        assert browser.errors() == []

        browser.evaluate("document.getElementById('ask-text').value = 'x'.repeat(1001)")
        browser.click("#ask-send")
        browser.wait_for("document.getElementById('ask-said').textContent.startsWith('not asked')")
        assert "1,000" in text_of(browser, "#ask-said"), "bounded as a request is"
        browser.screenshot(tmp_path / "browser" / "asked.png")
        [refused] = browser.errors()
        assert "400 (Bad Request)" in refused and f"{server.root}/runs" in refused, "the refusal, no other"
    finally:
        browser.close()
        server.stop()


def test_a_question_is_asked_behind_the_same_door_as_the_api(tmp_path: Path):
    state = Path(os.environ["MASSGEN_HOME"])
    server = ServedInThread(state, write_configs(tmp_path, {"echo": echo_agent()}), token=TOKEN)
    question = {"model": "massgen", "question": "Repeat codeword-door"}
    cookie = {f"massgen_token_{server.root.rsplit(':', 1)[1]}": TOKEN}
    try:
        assert httpx.post(f"{server.root}/runs", json=question, timeout=10).status_code == 401
        form = httpx.post(f"{server.root}/runs", data=question, cookies=cookie, timeout=10)
        assert form.status_code == 415, "what another site's page could send unasked is refused"
        evil = httpx.post(f"{server.root}/runs", json=question, cookies=cookie, timeout=10,
                          headers={"origin": "http://evil.example"})  # fmt: skip
        assert evil.status_code == 403
        for body, param in [
            ({"model": "massgen", "question": "  "}, "question"),
            ({"model": "massgen", "question": "hi", "tools": []}, "tools"),
            ('{"model": "massgen", "question": "\\ud800"}', "question"),
        ]:
            sent = body if isinstance(body, str) else json.dumps(body)
            headers = {"content-type": "application/json"}
            refused = httpx.post(f"{server.root}/runs", content=sent, headers=headers, cookies=cookie,
                                 timeout=10)  # fmt: skip
            assert refused.status_code == 400 and refused.json()["error"]["param"] == param, refused.text
        unknown = httpx.post(f"{server.root}/runs", json={**question, "model": "massgen/x"}, cookies=cookie,
                             timeout=10)  # fmt: skip
        assert unknown.status_code == 404
        assert server.app.state.runs.finished == deque() and not server.app.state.runs.live, "none ran"
        asked = httpx.post(f"{server.root}/runs", json=question, cookies=cookie, timeout=10)
        assert asked.status_code == 202
        run = asked.json()["id"]
        wait_until(lambda: _finished(server.root, cookie))
        listed = _finished(server.root, cookie)
        assert listed[0]["id"] == run and listed[0]["answer"] == "You said codeword-door."
    finally:
        server.stop()


def _finished(root: str, cookie: dict[str, str]) -> list[dict]:  # type: ignore[type-arg]
    return list(httpx.get(f"{root}/runs", cookies=cookie, timeout=10).json()["finished"])

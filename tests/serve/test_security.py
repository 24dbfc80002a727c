"""The doors of `massgen serve` and `massgen --web`: a request naming another host (DNS rebinding) or sent
by another site's page is refused; `--web` makes a token, prints its address with it, keeps it in a
same-site strict, HTTP-only cookie and refuses every request without it; a steering message is bounded
and recorded (events.jsonl, `massgen logs show`, the report); a request is bounded by what it costs
(messages, characters, nesting) and text that is no text (a lone surrogate) is a 400 naming where."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from massgen_cli.inbox import MAX_MESSAGE_CHARS, STEERING_HEADER
from tests.cli.headless import Browser, chromium_or_fail
from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until
from tests.serve.serving import ServedInThread, ServedProcess, gated_agent, server_environment, write_configs
from tests.serve.test_web import requests_of, team

WEB_ANNOUNCED = re.compile(
    r"massgen --web: watch and steer the run at (http://127\.0\.0\.1:(\d+)/)\?token=(\S+)"
)
EVIL = "evil.example"
STEER = "Answer in one word, please."


def is_openai_error(response: httpx.Response, status: int, code: str | None = None) -> bool:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"], error
    return response.status_code == status and (code is None or error["code"] == code)


def running_id(root: str, **options: object) -> str:
    """The id of the one running turn, once it runs."""
    wait_until(lambda: httpx.get(f"{root}/runs", timeout=10, **options).json()["live"])  # type: ignore[arg-type]
    return str(httpx.get(f"{root}/runs", timeout=10, **options).json()["live"][0]["id"])  # type: ignore[arg-type]


class GatedServer:
    """The app in the test's thread, serving one agent that waits at ``gate``, a question to it asked
    in a thread of the test (``self.running``: its run's id)."""

    def __init__(self, folder: Path):
        self.gate = folder / "gate"
        configs = write_configs(folder, {"gated": gated_agent(self.gate)})
        self.server = ServedInThread(Path(os.environ["MASSGEN_HOME"]), configs)
        self.root = self.server.root
        body = {"model": "massgen", "messages": [{"role": "user", "content": "codeword-gated"}]}
        self.asking = threading.Thread(
            target=lambda: httpx.post(f"{self.root}/v1/chat/completions", json=body, timeout=120)
        )
        self.asking.start()
        self.running = running_id(self.root)

    def close(self) -> None:
        self.gate.write_text("open")
        self.asking.join(timeout=120)
        self.server.stop()


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[GatedServer]:
    served = GatedServer(tmp_path)
    yield served
    served.close()


def test_a_request_naming_another_host_is_refused(gated: GatedServer):
    root, run = gated.root, gated.running
    evil = {"host": f"{EVIL}:{root.rsplit(':', 1)[1]}"}
    for path in ("/runs", f"/runs/{run}/events", "/v1/models", "/health", "/"):
        assert is_openai_error(httpx.get(f"{root}{path}", headers=evil, timeout=10), 421, "host_not_allowed")
    steered = httpx.post(f"{root}/runs/{run}/steer", json={"message": "from evil"}, headers=evil, timeout=10)
    assert is_openai_error(steered, 421, "host_not_allowed")
    body = {"model": "massgen", "messages": [{"role": "user", "content": "hi"}]}
    asked = httpx.post(f"{root}/v1/chat/completions", headers=evil, json=body, timeout=10)
    assert is_openai_error(asked, 421, "host_not_allowed")
    port = root.rsplit(":", 1)[1]
    for own in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        listed = httpx.get(f"{root}/runs", headers={"host": own}, timeout=10)
        assert listed.status_code == 200 and [r["id"] for r in listed.json()["live"]] == [run]
    assert gated.server.app.state.runs.live[run].inbox.messages() == [], "nothing reached the run"


def test_a_request_from_another_sites_page_is_refused(gated: GatedServer):
    root, run = gated.root, gated.running
    port = root.rsplit(":", 1)[1]
    for origin in (
        f"http://{EVIL}",
        f"http://{EVIL}:{port}",
        "null",
        f"http://localhost:{port}",
        "http://[::1",
    ):
        headers = {"origin": origin}
        assert is_openai_error(
            httpx.get(f"{root}/runs", headers=headers, timeout=10), 403, "origin_not_allowed"
        )
        stopped = httpx.post(f"{root}/runs/{run}/stop", json={}, headers=headers, timeout=10)
        assert is_openai_error(stopped, 403, "origin_not_allowed")
        steered = httpx.post(f"{root}/runs/{run}/steer", json={"message": "x"}, headers=headers, timeout=10)
        assert is_openai_error(steered, 403, "origin_not_allowed")
    assert httpx.get(f"{root}/health", headers={"origin": f"http://{EVIL}"}, timeout=10).status_code == 200
    own = httpx.get(f"{root}/runs", headers={"origin": root}, timeout=10)
    assert own.status_code == 200 and [r["id"] for r in own.json()["live"]] == [run], "the run still runs"


def test_serve_answers_the_hosts_it_is_told_to(tmp_path: Path):
    config = write_configs(tmp_path, {"echo": gated_agent(tmp_path / "gate")})[0]
    server = ServedProcess(tmp_path, "-c", str(config), "--allowed-host", "massgen.test")
    try:
        port = server.url.removesuffix("/v1").rsplit(":", 1)[1]
        named = httpx.get(f"{server.url}/models", headers={"host": f"massgen.test:{port}"}, timeout=10)
        assert named.status_code == 200
        other = httpx.get(f"{server.url}/models", headers={"host": f"{EVIL}:{port}"}, timeout=10)
        assert is_openai_error(other, 421, "host_not_allowed")
        assert "massgen.test" in server.stderr()
    finally:
        assert server.stop() == 0


def test_a_steering_message_is_bounded(gated: GatedServer):
    root, run = gated.root, gated.running
    steer = f"{root}/runs/{run}/steer"
    too_long = httpx.post(steer, json={"message": "x" * (MAX_MESSAGE_CHARS + 1)}, timeout=10)
    assert (
        is_openai_error(too_long, 413, "message_too_long") and too_long.json()["error"]["param"] == "message"
    )
    huge = httpx.post(steer, json={"message": "x" * 5_000_000}, timeout=30)
    assert is_openai_error(huge, 413, "too_large")
    not_text = httpx.post(steer, content=b'{"message": "\\ud800"}', timeout=10,
                          headers={"content-type": "application/json"})  # fmt: skip
    assert is_openai_error(not_text, 400) and not_text.json()["error"]["param"] == "message"
    fits = httpx.post(steer, json={"message": "y" * MAX_MESSAGE_CHARS}, timeout=10)
    assert fits.status_code == 200 and fits.json()["sent"] == "y" * MAX_MESSAGE_CHARS


def chat(root: str, content: bytes) -> httpx.Response:
    return httpx.post(f"{root}/v1/chat/completions", content=content, timeout=60,
                      headers={"content-type": "application/json"})  # fmt: skip


def test_a_request_is_bounded_by_what_it_costs(tmp_path: Path):
    server = ServedInThread(
        Path(os.environ["MASSGEN_HOME"]), write_configs(tmp_path, {"g": gated_agent(tmp_path)})
    )
    question = {"role": "user", "content": "Which codeword?"}
    try:
        surrogate = (
            b'{"model": "massgen", "messages": [%s, %s, {"role": "user", "content": "a\\ud800b"}]}'
            % (json.dumps(question).encode(), json.dumps({"role": "assistant", "content": "Noted."}).encode())
        )
        refused = chat(server.root, surrogate)
        assert is_openai_error(refused, 400) and refused.json()["error"]["param"] == "messages[2].content"
        deep = b'{"model": "massgen", "messages": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
        assert is_openai_error(chat(server.root, deep), 400, "too_deep")
        many = {"model": "massgen", "messages": [question] * 2001}
        too_many = chat(server.root, json.dumps(many).encode())
        assert is_openai_error(too_many, 400, "too_many_messages")
        assert too_many.json()["error"]["param"] == "messages"
        long = {
            "model": "massgen",
            "messages": [{"role": "user", "content": "x" * 1_000_000}] * 2 + [question],
        }
        too_long = chat(server.root, json.dumps(long).encode())
        assert is_openai_error(too_long, 400, "too_many_characters")
        assert too_long.json()["error"]["param"] == "messages"
        assert httpx.get(f"{server.root}/?token=%ED%A0%80", timeout=10).status_code == 200, "no cookie to set"
        assert httpx.get(f"{server.root}/runs", timeout=10).json()["live"] == [], "no turn ran"
    finally:
        server.stop()


class WebRun:
    """``massgen --web`` in a subprocess on the gated team (``gate`` opens beta's answer), its address
    and token read from the line it prints."""

    def __init__(self, folder: Path):
        self.folder, self.gate = folder, folder / "gate"
        (config,) = write_configs(folder, {"team": team(self.gate)})
        self.stderr_path, self.stdout_path = folder / "web.stderr", folder / "web.stdout"
        with self.stderr_path.open("w") as stderr, self.stdout_path.open("w") as stdout:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "massgen_cli", "--web", "-c", str(config), "What is the capital?"],
                cwd=folder, env=server_environment(folder, {}), stdout=stdout, stderr=stderr,
            )  # fmt: skip
        wait_until(lambda: self._announced() or self.process.poll() is not None, 120)
        found = self._announced()
        assert found, self.stderr_path.read_text()
        self.root, self.port, self.token = found.group(1).rstrip("/"), found.group(2), found.group(3)

    def _announced(self) -> re.Match[str] | None:
        return WEB_ANNOUNCED.search(self.stderr_path.read_text())

    @property
    def cookies(self) -> dict[str, str]:
        return {f"massgen_token_{self.port}": self.token}

    def finish(self) -> int:
        self.gate.write_text("open")
        try:
            return self.process.wait(timeout=120)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture
def web_run(tmp_path: Path) -> Iterator[WebRun]:
    run = WebRun(tmp_path)
    yield run
    run.finish()


def test_the_web_view_needs_its_token_and_keeps_it_in_a_strict_cookie(web_run: WebRun):
    root, token = web_run.root, web_run.token
    assert len(token) >= 32
    run = running_id(root, cookies=web_run.cookies)
    for path in ("/", "/runs", f"/runs/{run}/events", "/web/page.js", "/v1/models"):
        assert is_openai_error(httpx.get(f"{root}{path}", timeout=10), 401, "invalid_api_key"), path
        wrong = httpx.get(f"{root}{path}", params={"token": token[:-1]}, timeout=10)
        assert is_openai_error(wrong, 401, "invalid_api_key"), path
    for request in ("steer", "stop"):
        refused = httpx.post(f"{root}/runs/{run}/{request}", json={"message": "x"}, timeout=10)
        assert is_openai_error(refused, 401, "invalid_api_key")
    opened = httpx.get(f"{root}/", params={"token": token}, timeout=10)
    assert opened.status_code == 303 and opened.headers["location"] == "/"
    cookie = opened.headers["set-cookie"]
    assert cookie.startswith(f"massgen_token_{web_run.port}={token};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert httpx.get(f"{root}/", cookies=web_run.cookies, timeout=10).status_code == 200
    bearer = httpx.get(f"{root}/runs", headers={"authorization": f"Bearer {token}"}, timeout=10)
    assert bearer.status_code == 200 and bearer.json()["live"][0]["id"] == run
    evil = httpx.get(f"{root}/runs", cookies=web_run.cookies, headers={"host": f"{EVIL}:{web_run.port}"})
    assert is_openai_error(evil, 421, "host_not_allowed"), "the token does not open it to another host"
    assert web_run.finish() == 0
    assert web_run.stdout_path.read_text() == "Paris.\n"
    logs = "".join(path.read_text() for path in (web_run.folder / "state").rglob("*.json*"))
    assert token not in logs


def test_a_steering_message_is_recorded_in_the_log_logs_show_and_the_report(web_run: WebRun):
    root = web_run.root
    run = running_id(root, cookies=web_run.cookies)
    state = web_run.folder / "state"
    steered = httpx.post(
        f"{root}/runs/{run}/steer", json={"message": STEER}, cookies=web_run.cookies, timeout=10
    )
    assert steered.status_code == 200
    assert web_run.finish() == 0, web_run.stderr_path.read_text()
    assert f"{STEERING_HEADER} {STEER}" in requests_of(state, "alpha")[2], "the agents' next step has it"
    events = [json.loads(line) for path in state.glob("massgen_logs/*/turn_1/attempt_1/events.jsonl")
              for line in path.read_text().splitlines()]  # fmt: skip
    assert [event["text"] for event in events if event["type"] == "SteeringMessage"] == [STEER]
    shown = massgen("logs", "show")
    assert shown.exit_code == 0 and f"you: {STEER}" in shown.stdout
    report = state.parent / "report.html"
    assert massgen("logs", "report", "--out", str(report)).exit_code == 0
    assert f"you said: {STEER}" in report.read_text()


def test_the_web_page_works_with_its_address_token_and_shows_nothing_without_it(web_run: WebRun):
    chromium_or_fail()
    without = Browser(web_run.folder / "without")
    try:
        without.visit(f"{web_run.root}/")
        assert without.evaluate("document.getElementById('timeline') === null"), "no page"
        shown = without.evaluate("document.body.innerText")
        assert "invalid_api_key" in shown and "Paris" not in shown and "capital" not in shown
    finally:
        without.close()
    browser = Browser(web_run.folder / "browser")
    try:
        browser.visit(f"{web_run.root}/?token={web_run.token}")
        assert browser.evaluate("location.search") == "", "the token left the address for a cookie"
        browser.wait_for("!!document.querySelector('#timeline li.vote')")
        browser.evaluate(f"document.getElementById('steer-text').value = {json.dumps(STEER)}")
        browser.click("#steer-send")
        browser.wait_for("document.getElementById('steer-said').textContent.startsWith('sent')")
        assert browser.evaluate("document.cookie") == "", "the page's script cannot read the token"
        assert browser.errors() == []
    finally:
        browser.close()
    assert web_run.finish() == 0


class _OtherSite:
    """A page of another local site (127.0.0.1, another port: the same site to the browser, so the web
    view's SameSite cookie goes along) that sends the run a stop, as a page a user opens might."""

    PAGE = b"<!doctype html><title>another site</title><p>another local page</p>"

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        page = self.PAGE

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_page_of_another_local_site_cannot_stop_or_steer_the_run(web_run: WebRun):
    """In a real browser that holds the view's cookie, a page on another port sends a stop and a steering
    message with credentials: the Origin check refuses both, and the run goes on to its answer."""
    chromium_or_fail()
    run = running_id(web_run.root, cookies=web_run.cookies)
    other = _OtherSite()
    browser = Browser(web_run.folder / "browser")
    try:
        browser.visit(f"{web_run.root}/?token={web_run.token}")  # the user's own view: the cookie is set
        browser.wait_for("!!document.getElementById('timeline')")
        browser.visit(f"{other.root}/")
        sent = json.dumps([f"{web_run.root}/runs/{run}/stop", f"{web_run.root}/runs/{run}/steer"])
        browser.evaluate(
            f"window.sent = Promise.all({sent}.map(url => fetch(url, {{method: 'POST', mode: 'no-cors', "
            "credentials: 'include', headers: {'content-type': 'text/plain'}, body: JSON.stringify("
            "{message: 'injected'})}).then(() => 'sent', () => 'failed'))); window.sent.then(r => "
            "window.done = r.join(','))"
        )
        browser.wait_for("window.done !== undefined")
    finally:
        browser.close()
        other.close()
    live = httpx.get(f"{web_run.root}/runs", cookies=web_run.cookies, timeout=10).json()["live"]
    assert [entry["id"] for entry in live] == [run], "the run was not stopped"
    assert web_run.finish() == 0 and web_run.stdout_path.read_text() == "Paris.\n"
    logged = "".join(p.read_text() for p in (web_run.folder / "state").rglob("events.jsonl"))
    assert "injected" not in logged, "nor steered"

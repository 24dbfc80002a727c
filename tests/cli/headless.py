"""Headless Chromium for the report's tests, driven over the DevTools protocol on a pipe (fds 3 and 4,
``--remote-debugging-pipe``) with the standard library only: no port is opened, and the page runs with
the network off (offline emulation, no name resolution but 127.0.0.1's, a proxy that goes nowhere;
``visit`` lets a test's own server on 127.0.0.1 be reached). Every wait is for a state, bounded by one
deadline; past it, the browser's process group is killed."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ALLOW_NO_BROWSER = "MASSGEN_ALLOW_NO_BROWSER"
SCREEN = (1366, 768)
"""A laptop's screen."""
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # a test's own server only
    "--proxy-server=http://127.0.0.1:9",
    "--enable-logging=stderr",
    "--v=0",
    f"--window-size={SCREEN[0]},{SCREEN[1]}",
]


def chromium_or_fail() -> str:
    """Chromium's executable; without one the test fails, naming the install command (or is skipped,
    saying so, when MASSGEN_ALLOW_NO_BROWSER is set)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = (
        "chromium is not installed: `apt-get install -y chromium` (the report is tested in a real browser)"
    )
    if os.environ.get(ALLOW_NO_BROWSER):
        pytest.skip(f"{message}; skipped because {ALLOW_NO_BROWSER} is set")
    pytest.fail(f"{message}; set {ALLOW_NO_BROWSER}=1 to skip this test instead")


class Browser:
    """One headless Chromium with one page; ``errors`` gathers what the page reported as an error."""

    def __init__(self, folder: Path, timeout_s: float = 60.0):
        self.deadline = time.monotonic() + timeout_s
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "chromium.log"
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        to_child, self.to_browser = _pipe_above(10)
        self.from_browser, from_child = _pipe_above(10)
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [
                    "bash",
                    "-c",
                    f'exec "$0" "$@" 3<&{to_child} 4>&{from_child}',
                    chromium_or_fail(),
                    *FLAGS,
                    f"--user-data-dir={folder / 'profile'}",
                ],
                pass_fds=(to_child, from_child),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        os.close(to_child)
        os.close(from_child)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.session = self._open_page()

    def _read(self) -> None:
        pending = b""
        while chunk := os.read(self.from_browser, 1 << 16):
            pending += chunk
            *whole, pending = pending.split(b"\0")
            for message in whole:
                self.messages.put(json.loads(message))

    def _open_page(self) -> str:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Network.emulateNetworkConditions",
            session=session,
            offline=True,
            latency=0,
            downloadThroughput=-1,
            uploadThroughput=-1,
        )
        width, height = SCREEN
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return session

    def call(self, method: str, *, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer (events that come meanwhile are kept)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._next()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise AssertionError(f"{method} failed: {answer['error']}")
                return dict(answer.get("result", {}))
            self.events.append(answer)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, session=self.session, **params)

    def _next(self) -> dict[str, Any]:
        left = self.deadline - time.monotonic()
        try:
            return self.messages.get(timeout=max(left, 0.001))
        except queue.Empty:
            self.kill()
            seen = [e.get("method") for e in self.events][-20:]
            raise AssertionError(
                f"the browser did not answer in time (last events {seen}); its log: {self.log_tail()}"
            ) from None

    def load(self, path: Path) -> None:
        """Open ``path`` and wait for its load event."""
        self.page("Page.navigate", url=path.resolve().as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._next())

    def visit(self, url: str) -> None:
        """Open ``url`` (a server of the test's, on 127.0.0.1: the network is let on for it) and wait for
        its load event."""
        self.page("Network.emulateNetworkConditions", offline=False, latency=0, downloadThroughput=-1,
                  uploadThroughput=-1)  # fmt: skip
        self.page("Page.navigate", url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._next())

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression!r} raised: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the first element ``selector`` finds."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView("
            "{block: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, "
            "r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def wait_for(self, expression: str) -> Any:
        """The value of ``expression`` once it is truthy (checked every 20 ms until the deadline)."""
        while not (value := self.evaluate(expression)):
            if time.monotonic() > self.deadline:
                raise AssertionError(f"never true in the page: {expression}")
            time.sleep(0.02)
        return value

    def screenshot(self, path: Path) -> None:
        """The whole page, as wide as the screen, from its top."""
        height = self.evaluate("window.scrollTo(0, 0), document.documentElement.scrollHeight")
        clip = {"x": 0, "y": 0, "width": SCREEN[0], "height": height, "scale": 1}
        data = self.page("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)[
            "data"
        ]
        path.write_bytes(base64.b64decode(data))

    def requested_urls(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def errors(self) -> list[str]:
        """Script errors and error messages the page reported, and console errors in the browser's log."""
        found = [
            json.dumps(e["params"])
            for e in self.events
            if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
        ]
        console = [line for line in self.log_tail(10**6).splitlines() if ":CONSOLE" in line]
        return found + [line for line in console if "Uncaught" in line or "rror" in line]

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def close(self) -> None:
        """Ask the browser to close; kill its process group if it has not ended by the deadline."""
        try:
            if self.process.poll() is None:
                self.call("Browser.close")
            self.process.wait(timeout=max(self.deadline - time.monotonic(), 0.1))
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.kill()
        finally:
            os.close(self.to_browser)
            self.reader.join(timeout=10)  # the browser has ended: its end of the pipe is closed
            if not self.reader.is_alive():
                os.close(self.from_browser)

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        self.process.wait(timeout=10)


def _pipe_above(lowest: int) -> tuple[int, int]:
    """A pipe whose two ends are numbered ``lowest`` or more (so the child's 3 and 4 can be set from them
    in any order)."""
    read, write = os.pipe()
    high = fcntl.fcntl(read, fcntl.F_DUPFD, lowest), fcntl.fcntl(write, fcntl.F_DUPFD, lowest)
    os.close(read)
    os.close(write)
    return high

"""The live view on a real terminal: a pseudo-terminal 150 columns wide, as a user's terminal is."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time

ANSWER = "The capital of France is Paris, its largest city."
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-B]|\x1b[=>78]")


def run_on_a_terminal(args: list[str], columns: int = 150, rows: int = 50, within_s: float = 120) -> str:
    """``massgen ARGS`` with stdin, stdout and stderr on one pseudo-terminal; all it wrote, once it exits."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "", "LINES": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", *args], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks, deadline = [], time.monotonic() + within_s
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's last writer is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=max(1.0, deadline - time.monotonic())) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_a_presented_answer_stands_on_its_own_lines_once_with_no_panel_after_it():
    raw = run_on_a_terminal(["--config", "@examples/scripted_three_agents", "What is the capital of France?"])
    text = ESCAPES.sub("", raw).replace("\r", "")
    assert "╭" in text, "the live view drew its panels"
    assert text.count(ANSWER) == 1
    at = text.index(ANSWER)
    assert text[at - 1] == "\n" and text[at + len(ANSWER)] == "\n", "the answer is glued to a panel"
    assert "╭" not in text[at:] and "│" not in text[at:], "a panel was drawn after the answer"
    assert "Turn 1 ended" in text[at:]


HOSTILE = "Paris.\x1b]0;pwned\x07 \x1b[2J\x1b[31mred\r\x9bnext"


def test_a_model_s_control_characters_never_reach_the_terminal(tmp_path):
    import yaml

    config = tmp_path / "hostile.yaml"
    config.write_text(
        yaml.safe_dump({"agent": {"id": "solo", "backend": {"type": "scripted", "responses": [HOSTILE]}}})
    )
    ask = [
        sys.executable,
        "-m",
        "massgen_cli",
        "--state-dir",
        str(tmp_path / "state"),
        "-c",
        str(config),
        "-q",
        "Q?",
    ]
    master, slave = pty.openpty()
    done = subprocess.run(
        ask,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert done.returncode == 0, done.stderr
    assert b"Paris." in shown and b"red" in shown and b"next" in shown
    assert b"\x1b" not in shown and b"\x07" not in shown and "\x9b".encode() not in shown
    piped = subprocess.run(
        ask,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert piped.stdout.decode() == HOSTILE + "\n", "a pipe gets the answer as it is"

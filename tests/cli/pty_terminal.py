"""``massgen`` on a pseudo-terminal, driven as a person types: wait for text on the screen, then type.
The terminal answers cursor position requests as a real one does (prompt_toolkit asks)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

CURSOR_FORWARD = re.compile(r"\x1b\[(\d*)C")
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-B]|\x1b[=>78]")
CURSOR_POSITION_REQUEST = b"\x1b[6n"
UP, CTRL_C, CTRL_D, ENTER = "\x1b[A", "\x03", "\x04", "\r"


class Terminal:
    """One ``massgen ARGS`` with stdin, stdout and stderr on one pseudo-terminal."""

    def __init__(self, args: list[str], columns: int = 150, rows: int = 50):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "", "LINES": ""}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "massgen_cli", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            preexec_fn=_take_the_terminal,
        )
        os.close(slave)
        self.raw = b""

    @property
    def screen(self) -> str:
        """All it wrote so far, without escape sequences or carriage returns (a move of the cursor to the
        right over a blank line reads as the spaces it skips)."""
        text = self.raw.decode("utf-8", errors="replace")
        text = CURSOR_FORWARD.sub(lambda move: " " * int(move.group(1) or 1), text)
        return ESCAPES.sub("", text).replace("\r", "")

    def expect(self, text: str, *, after: int = 0, within_s: float = 60) -> int:
        """Wait until ``text`` is on the screen past position ``after``; where it ends."""
        deadline = time.monotonic() + within_s
        while (found := self.screen.find(text, after)) < 0:
            if time.monotonic() > deadline or not self._read(deadline - time.monotonic()):
                raise AssertionError(f"never showed {text!r}; the screen:\n{self.screen[-3000:]}")
        return found + len(text)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, within_s: float = 60) -> int:
        """Read what is left until it exits; its exit code."""
        deadline = time.monotonic() + within_s
        while self._read(deadline - time.monotonic()):
            pass
        return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)

    def _read(self, within_s: float) -> bool:
        """Read what is there (waiting up to ``within_s``); False once the program closed the terminal."""
        ready, _, _ = select.select([self.master], [], [], max(0.0, within_s))
        if not ready:
            return within_s > 0
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the terminal's last writer is gone
            return False
        for _ in range(chunk.count(CURSOR_POSITION_REQUEST)):
            self.type("\x1b[1;1R")
        self.raw += chunk
        return bool(chunk)


def _take_the_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pseudo-terminal, so Ctrl-C
    typed there is SIGINT, as in a user's shell."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

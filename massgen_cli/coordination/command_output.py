"""A running command's output as it comes, for the views: its last lines (escape codes stripped, secrets
redacted, each line and their count bounded), sent as ``CommandOutput`` at most every ``EVERY_S``
seconds; output that comes sooner is sent when that time is up, so the last lines are never held back."""

from __future__ import annotations

import asyncio
import codecs
import re
import time
from collections import deque
from collections.abc import Callable

from massgen_cli.events import LIVE_LINE_CHARS, LIVE_LINES, CommandOutput, RunEvent
from massgen_cli.redaction import redactor

EVERY_S = 0.2
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, links
    r"|\x1b[@-Z\\-_]"  # two-byte sequences
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"  # control characters but tab, newline and carriage return
)
"""Terminal escape sequences (CSI, OSC, two-byte) and control characters but tab and newline."""


class LiveCommandOutput:
    """Hears a command's output bytes (``__call__``) and sends its last lines to ``emit``."""

    def __init__(self, agent_id: str, call_id: str, command: str, emit: Callable[[RunEvent], None]) -> None:
        self._redact = redactor()
        self.agent_id, self.call_id, self.command = agent_id, call_id, self._redact(command)
        self._emit = emit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lines: deque[str] = deque(maxlen=LIVE_LINES)
        self._partial = ""
        self._finished = 0
        self._sent_at = 0.0
        self._later: asyncio.TimerHandle | None = None

    def __call__(self, chunk: bytes) -> None:
        text = self._partial + self._decoder.decode(chunk).replace("\r\n", "\n")
        *done, self._partial = text.split("\n")
        for line in done:
            self._lines.append(_shown(line.rsplit("\r", 1)[-1]))  # a carriage return redraws its line
        self._finished += len(done)
        self._partial = self._partial[-LIVE_LINE_CHARS * 4 :]
        self._send_soon()

    def started(self) -> None:
        """Say the command has started (no output yet)."""
        self._send()

    def close(self) -> None:
        """The command ended: what it printed since the last send is sent now (a quick command's lines
        are shown too), and nothing after."""
        if self._later is not None:
            self._later.cancel()
            self._send()

    def _send_soon(self) -> None:
        wait = self._sent_at + EVERY_S - time.monotonic()
        if wait <= 0:
            self._send()
        elif self._later is None:
            self._later = asyncio.get_running_loop().call_later(wait, self._send)

    def _send(self) -> None:
        self._later = None
        self._sent_at = time.monotonic()
        unfinished = self._redact(_shown(self._partial.rsplit("\r", 1)[-1]))
        lines = tuple(self._redact(list(self._lines)))
        said = CommandOutput(self.agent_id, self.call_id, self.command, lines, unfinished, self._finished)
        self._emit(said)


def _shown(line: str) -> str:
    clean = _ESCAPES.sub("", line).expandtabs(4).rstrip()
    return clean if len(clean) <= LIVE_LINE_CHARS else clean[: LIVE_LINE_CHARS - 1] + "…"

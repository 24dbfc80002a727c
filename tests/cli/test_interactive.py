"""Interactive sessions: Ctrl-C cancels the running turn and the session goes on."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time

from tests.conftest import write_config

STREAM_WAIT_SECONDS = 60


def read_until(stream, marker: bytes, timeout: float) -> bytes:  # type: ignore[no-untyped-def]
    """Bytes of ``stream`` up to and including ``marker``; fails if it does not come in ``timeout``."""
    seen, deadline = b"", time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while marker not in seen:
            left = deadline - time.monotonic()
            assert left > 0 and selector.select(left), f"no {marker!r} within {timeout}s (got {seen!r})"
            chunk = os.read(stream.fileno(), 4096)
            assert chunk, f"the stream ended before {marker!r} (got {seen!r})"
            seen += chunk
    return seen


def test_ctrl_c_cancels_the_turn_and_keeps_the_session(tmp_path):
    config = write_config(
        tmp_path,
        """
        agent:
          id: solo
          backend:
            type: scripted
            responses: [{text: "Partial", delay: 60}, "Second answer."]
        """,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "massgen_cli", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"slow question\n")
    process.stdin.flush()
    started = read_until(process.stdout, b"Partial", STREAM_WAIT_SECONDS)  # the turn is streaming
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(b"second question\n", timeout=60)
    assert process.returncode == 0, stderr.decode()
    assert (started + rest).decode() == "Partial\nSecond answer.\n", "the cancelled turn's line is ended"
    assert "turn cancelled; the session goes on" in stderr.decode()

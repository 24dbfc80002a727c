"""Interactive sessions: Ctrl-C cancels the running turn and the session goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.conftest import events_text, wait_until, write_config

STREAM_WAIT_SECONDS = 60


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
    wait_until(lambda: "Partial" in events_text(), STREAM_WAIT_SECONDS)  # the turn is streaming
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(b"second question\n", timeout=60)
    assert process.returncode == 0, stderr.decode()
    assert rest.decode() == "Second answer.\n", "stdout holds final answers only, not the cancelled part"
    assert "turn cancelled; the session goes on" in stderr.decode()
    assert stderr.decode().count("cancelled") == 1, "said once"

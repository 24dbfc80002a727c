"""Interactive sessions: Ctrl-C cancels the running turn and the session goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import write_config


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
        text=True,
        env=dict(os.environ),
    )
    assert process.stdin is not None
    process.stdin.write("slow question\n")
    process.stdin.flush()
    time.sleep(2.0)
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)
    stdout, stderr = process.communicate("second question\n", timeout=60)
    assert process.returncode == 0, stderr
    assert stdout == "Partial\nSecond answer.\n", "the cancelled turn's line is ended"
    assert "turn cancelled; the session goes on" in stderr

"""A short program run in a Python process of its own with a command line after it: how the tests see
what a start imports or turns on, which one process cannot show twice."""

from __future__ import annotations

import subprocess
import sys


def run_probe(probe: str, line: list[str] | tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """``python -c PROBE LINE...``, its output captured as text (a hung probe fails after two minutes)."""
    return subprocess.run(
        [sys.executable, "-c", probe, *line], capture_output=True, text=True, timeout=120, check=False
    )

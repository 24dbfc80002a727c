"""Starting a program behind the reaper (``tools/reaper.py``), so all it starts dies with the runner."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REAPER = Path(__file__).with_name("reaper.py")


def reaped(program: list[str]) -> list[str]:
    """The command line that runs ``program`` behind the reaper, tied to this process."""
    return [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), *program]

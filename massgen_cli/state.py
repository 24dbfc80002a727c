"""Where state lives: ``--state-dir``, else ``MASSGEN_HOME``, else ``./.massgen``."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

STATE_DIR_NAME = ".massgen"


def resolve_state_dir(flag: str | Path | None = None) -> Path:
    """The state folder (created if missing)."""
    chosen = flag or os.environ.get("MASSGEN_HOME") or Path.cwd() / STATE_DIR_NAME
    path = Path(chosen).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def timestamp(moment: datetime | None = None) -> str:
    """``YYYYMMDD_HHMMSS_ffffff``, the stamp used in log and session names."""
    return (moment or datetime.now()).strftime("%Y%m%d_%H%M%S_%f")

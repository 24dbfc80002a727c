"""Where state lives: ``--state-dir``, else ``MASSGEN_HOME``, else ``./.massgen``."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from massgen_cli.errors import MassGenError

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


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON in one step: readers never see half a file, even if the process dies."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    temporary.replace(path)


def read_json(path: Path, what: str) -> Any:
    """A JSON file of ours; a damaged one is a clear error (never silently replaced, so nothing is lost)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MassGenError(
            f"cannot read the {what} at {path} ({error}); repair or move that file, or use another --session"
        ) from error

"""Run logs: one ``massgen_logs/log_<ts>/`` per process, ``turn_<N>/attempt_<M>/`` inside.

An attempt folder holds ``events.jsonl`` (one typed event per line), ``requests/<agent>_<NNN>.json``
(each request sent to a backend, secrets redacted) and ``summary.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from massgen_cli.events import RunEvent, StreamEvent, event_to_dict
from massgen_cli.state import timestamp

_SECRET_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{16,}"),
]
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
REDACTED = "[REDACTED]"


def redact(value: Any) -> Any:
    """``value`` with API keys and tokens (by pattern and by the values of *_API_KEY variables) masked."""
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if not isinstance(value, str):
        return value
    for secret in _secret_values():
        value = value.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        value = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, value)
    return value


def _secret_values() -> list[str]:
    return [v for k, v in os.environ.items() if k.endswith(_SECRET_ENV_SUFFIXES) and len(v) >= 8]


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(redact(data), indent=2, ensure_ascii=False, default=str), encoding="utf-8")


class AttemptLog:
    """The log folder of one attempt of one turn."""

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._request_numbers: Counter[str] = Counter()
        self._events = (directory / "events.jsonl").open("a", encoding="utf-8")

    def event(self, event: RunEvent | StreamEvent, **context: Any) -> None:
        record = {"time": timestamp(), **context, **event_to_dict(event)}
        self._events.write(json.dumps(redact(record), ensure_ascii=False, default=str) + "\n")
        self._events.flush()

    def request(self, agent_id: str, payload: dict[str, Any]) -> Path:
        self._request_numbers[agent_id] += 1
        path = self.directory / "requests" / f"{agent_id}_{self._request_numbers[agent_id]:03d}.json"
        write_json(path, payload)
        return path

    def summary(self, data: dict[str, Any]) -> None:
        write_json(self.directory / "summary.json", data)

    def close(self) -> None:
        self._events.close()


class RunLog:
    """The log folder of one process; created on first use."""

    def __init__(self, state_dir: Path, *, enabled: bool = True):
        self.enabled = enabled
        self.directory = state_dir / "massgen_logs" / f"log_{timestamp()}"

    def attempt(self, turn: int, attempt: int) -> AttemptLog | None:
        if not self.enabled:
            return None
        return AttemptLog(self.directory / f"turn_{turn}" / f"attempt_{attempt}")

"""The benchmarks' paced OpenAI-compatible server (``benchmarks/paced_server.py``), importable by tests: a
real HTTP server on 127.0.0.1 that plays the coordination game by rule (an answer, then a vote for agent1,
text without tools) and reports usage."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "paced_server", Path(__file__).resolve().parents[2] / "benchmarks" / "paced_server.py"
)
assert _SPEC is not None and _SPEC.loader is not None
paced_server = sys.modules.get(_SPEC.name) or importlib.util.module_from_spec(_SPEC)
if _SPEC.name not in sys.modules:
    sys.modules[_SPEC.name] = paced_server  # its dataclasses look their module up
    _SPEC.loader.exec_module(paced_server)

PacedServer = paced_server.PacedServer

"""The benchmarks' paced OpenAI-compatible server (``benchmarks/paced_server.py``), importable by tests: a
real HTTP server on 127.0.0.1 that plays the coordination game by rule (an answer, then a vote for agent1,
text without tools) and reports usage."""

from __future__ import annotations

from tests.script_module import load_script

paced_server = load_script("benchmarks/paced_server.py")

PacedServer = paced_server.PacedServer

"""A plain question's start runs without cyclic garbage collections (``cli/start_collections``): they
resume, with what the start made frozen, once its run is built and before the agents are asked; every
other command runs with them as usual."""

from __future__ import annotations

import gc
from pathlib import Path

from massgen_cli.cli import main as cli_main
from massgen_cli.cli.start_collections import hold_collections, resume_collections
from tests.conftest import write_config
from tests.probe_run import run_probe

PROBE = """
import gc, sys
from massgen_cli.app import MassGenApp
from massgen_cli.cli.main import main

ask = MassGenApp.ask

def noted_ask(self, question):
    print("asked with collections", gc.isenabled(), "frozen", gc.get_freeze_count() > 0, file=sys.stderr)
    return ask(self, question)

MassGenApp.ask = noted_ask
try:
    main(sys.argv[1:])
except SystemExit as ended:
    print("exit", ended.code, "collections", gc.isenabled(), file=sys.stderr)
"""


def _run(*args: str) -> list[str]:
    done = run_probe(PROBE, args)
    return [line for line in done.stderr.splitlines() if line.startswith(("asked", "exit"))]


def test_a_plain_question_asks_with_collections_back_on(tmp_path: Path):
    config = write_config(tmp_path, "agent: {id: solo, backend: {type: scripted, responses: [hi]}}\n")
    lines = _run("-c", str(config), "--state-dir", str(tmp_path / "st"), "-q", "What is 6 x 7?")
    assert lines == ["asked with collections True frozen True", "exit 0 collections True"]


def test_a_start_that_fails_ends_with_collections_on(tmp_path: Path):
    config = write_config(tmp_path, "agent: {id: solo, backend: {type: opnai, model: m}}\n")
    assert _run("-c", str(config), "--state-dir", str(tmp_path / "st"), "Q?") == ["exit 2 collections True"]


def test_only_a_plain_question_holds_them():
    try:
        hold_collections()
        cli_main._command(["sessions", "list"])
        assert gc.isenabled()
        hold_collections()
        cli_main._command(["-q", "Q?", "--max-cost", "1"])  # Typer's to read
        assert gc.isenabled()
        hold_collections()
        cli_main._command(["-q", "Q?"])
        assert not gc.isenabled()
    finally:
        resume_collections()
    assert gc.isenabled()

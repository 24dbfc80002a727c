"""How a command's process ends. Commands that only read end without the interpreter's teardown once
their output is out: what they wrote to a pipe arrives whole and their exit code is the command's. Any
other command collects its garbage, then freezes the rest out of the interpreter's last collections.
(Run as real processes, since the process's own end is the point.)"""

from __future__ import annotations

import json
import subprocess
import sys

from massgen_cli.cli.main import READ_ONLY_COMMANDS, _command_words
from tests.cli.in_process_cli import massgen
from tests.cli.test_memory_commands import CONFIG
from tests.conftest import run_cli, write_config

MEMORIES = 400
"""Enough lines that ``memory list --json`` writes more than a pipe's buffer holds."""


def test_a_read_only_commands_output_arrives_whole_through_a_pipe(tmp_path):
    config = str(write_config(tmp_path, CONFIG))
    data = tmp_path / "ferries.jsonl"
    lines = [
        {"content": f"Ferry {n} leaves pier {n % 7} at {n % 24}:15 for the island."} for n in range(MEMORIES)
    ]
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert massgen("memory", "import", str(data), "--config", config, "--session", "harbour").exit_code == 0

    listed = run_cli("memory", "list", "--config", config, "--json", process=True)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(listed.stdout) > 65_536
    assert sorted(row["text"] for row in rows) == sorted(line["content"] for line in lines)

    found = run_cli("memory", "search", "ferry 17 pier", "--config", config, "--limit", "3", process=True)
    assert found.returncode == 0, found.stderr
    assert "Ferry 17 leaves pier 3" in found.stdout


def test_a_read_only_command_that_fails_keeps_its_exit_code(tmp_path):
    config = str(write_config(tmp_path, CONFIG + "  recall_limit_typo: 3\n"))
    failed = run_cli("memory", "search", "ferry", "--config", config, process=True)
    assert failed.returncode == 2
    assert "memory.recall_limit_typo" in failed.stderr


def test_the_command_words_are_read_wherever_options_stand():
    assert _command_words(["memory", "search", "ferry", "--limit", "3"]) == ("memory", "search")
    assert _command_words(["sessions", "list", "--state-dir", "list"]) == ("sessions", "list")
    assert _command_words(["memory", "import", "data.jsonl"]) not in READ_ONLY_COMMANDS


END_OF_A_COMMAND = """
import gc, sys
from massgen_cli.cli.main import main

class Cycle:
    def __del__(self):
        print("finalised", flush=True)

knot = Cycle()
knot.self = knot
del knot
gc.disable()  # the knot is garbage that only a collection finds
try:
    main(["--version"])
except SystemExit as ended:
    print(f"exit {ended.code} frozen {gc.get_freeze_count() > 0}", flush=True)
"""


def test_any_other_command_collects_its_garbage_then_freezes_the_rest_before_the_interpreter_ends():
    """A cycle's finaliser runs when the command ends (its garbage is collected while everything is
    still there), and what is left is frozen out of the interpreter's last collections."""
    ended = subprocess.run(
        [sys.executable, "-c", END_OF_A_COMMAND], capture_output=True, text=True, timeout=120
    )
    assert ended.returncode == 0, ended.stderr
    lines = ended.stdout.splitlines()
    assert lines[-2:] == ["finalised", "exit 0 frozen True"], ended.stdout

"""A command line run in a process of its own that says at exit whether it imported Typer: the plain
forms (a question, a memory search) are read without it, any other form through it."""

from __future__ import annotations

import subprocess

from tests.probe_run import run_probe

CHECK_IMPORTS = """
import atexit, sys
from massgen_cli.cli.main import main

atexit.register(lambda: print("typer imported:", "typer" in sys.modules, flush=True))
main(sys.argv[1:])
"""


def run_telling_typer(line: list[str]) -> subprocess.CompletedProcess[str]:
    """``massgen LINE``, ended with a stdout line ``typer imported: True|False``."""
    return run_probe(CHECK_IMPORTS, line)

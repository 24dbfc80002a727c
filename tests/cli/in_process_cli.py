"""``massgen ARGS`` inside the test's process: the command line routed as ``main`` routes it, then run by
Typer's runner, with stdout and stderr captured apart, and the files it makes private as ``main`` makes
them (the test's umask restored after). For tests where signals, locks between processes, real pipes and
a process's own exit are not the point (those run the command in a subprocess)."""

from __future__ import annotations

import os

from typer.testing import CliRunner, Result

from massgen_cli.cli.main import route
from massgen_cli.state import keep_files_private


def massgen(*args: str, stdin: str | None = None) -> Result:
    app, argv = route(list(args))
    umask = os.umask(0o077)
    os.umask(umask)
    keep_files_private()
    try:
        return CliRunner().invoke(app, argv, input=stdin, prog_name="massgen", catch_exceptions=False)
    finally:
        os.umask(umask)

"""``massgen ARGS`` inside the test's process: the command line routed as ``main`` routes it, then run by
Typer's runner, with stdout and stderr captured apart, and the files it makes private as ``main`` makes
them (the test's umask restored after). For tests where signals, locks between processes, real pipes and
a process's own exit are not the point (those run the command in a subprocess)."""

from __future__ import annotations

import gc
import os

from typer.testing import CliRunner, Result

from massgen_cli.cli.main import route
from massgen_cli.state import keep_files_private

UNFROZEN_OBJECTS_TO_SETTLE = 50_000


def settle_heap() -> None:
    """Before a run in this worker's process: what earlier tests left on the heap (mem0, the embedder,
    the SDKs: some 200k objects) is collected once and frozen out of later collections. Otherwise a full
    collection can pause a run for half a second on a busy machine, and scripted agents' timings (a
    delay of 0.2 s before an answer) are what their tests are about."""
    if len(gc.get_objects()) > UNFROZEN_OBJECTS_TO_SETTLE:  # the frozen ones are not listed
        gc.collect()
        gc.freeze()


def massgen(*args: str, stdin: str | None = None) -> Result:
    settle_heap()
    app, argv = route(list(args))
    umask = os.umask(0o077)
    os.umask(umask)
    keep_files_private()
    try:
        return CliRunner().invoke(app, argv, input=stdin, prog_name="massgen", catch_exceptions=False)
    finally:
        os.umask(umask)

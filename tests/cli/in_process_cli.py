"""``massgen ARGS`` inside the test's process: the command line routed as ``main`` routes it, then run by
Typer's runner, with stdout and stderr captured apart. For tests where signals, locks between processes
and real pipes are not the point (those run the command in a subprocess)."""

from __future__ import annotations

from typer.testing import CliRunner, Result

from massgen_cli.cli.main import route


def massgen(*args: str, stdin: str | None = None) -> Result:
    app, argv = route(list(args))
    return CliRunner().invoke(app, argv, input=stdin, prog_name="massgen", catch_exceptions=False)

"""Options several commands share, as Typer reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ConfigOption = Annotated[
    str | None,
    typer.Option("--config", "-c", help="YAML config file, or @examples/NAME for a shipped one."),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Where sessions, logs and memory live (default ./.massgen, or MASSGEN_HOME)."
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks and memory log lines.")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object per line.")]
